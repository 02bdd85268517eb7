import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

type Onnx = typeof import('onnx-proto')['onnx'];

/** onnx-proto is a dev dependency: loaded only when a test writes a model, never by importing #embeddings. */
async function loadOnnx(): Promise<Onnx> {
  const mod = (await import('onnx-proto')) as { onnx?: Onnx; default?: { onnx: Onnx } };
  return mod.onnx ?? mod.default!.onnx;
}

/** Words of the tiny model's vocabulary; ids follow the four special tokens. */
export const TINY_MODEL_WORDS = [
  'cat',
  'cats',
  'dog',
  'kitten',
  'feline',
  'pet',
  'stock',
  'market',
  'price',
  'rose',
  'fell',
  'the',
  'a',
  'sat',
  'on',
  'mat',
] as const;
export const TINY_MODEL_DIMENSION = 8;
const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;

/**
 * Embedding of each token id: a pseudo-random table, with "cat"-like words sharing a direction and
 * finance words another, so the model is "semantic" enough to test with.
 */
function embeddingTable(vocabSize: number): Float32Array {
  const table = new Float32Array(vocabSize * TINY_MODEL_DIMENSION);
  for (let id = 0; id < vocabSize; id++) {
    for (let d = 0; d < TINY_MODEL_DIMENSION; d++)
      table[id * TINY_MODEL_DIMENSION + d] = Math.sin(id * 7.31 + d * 1.7) * 0.3;
  }
  const lean = (word: string, dim: number) => {
    const id = SPECIAL.length + TINY_MODEL_WORDS.indexOf(word as (typeof TINY_MODEL_WORDS)[number]);
    table[id * TINY_MODEL_DIMENSION + dim] += 2;
  };
  for (const w of ['cat', 'cats', 'kitten', 'feline', 'pet']) lean(w, 0);
  for (const w of ['stock', 'market', 'price']) lean(w, 5);
  return table;
}

/**
 * ONNX graph: last_hidden_state[b, s, 8] = Gather(table, input_ids); attention_mask and token_type_ids are accepted.
 */
function modelBytes(onnx: Onnx, vocabSize: number): Uint8Array {
  const { TensorProto, TensorShapeProto } = onnx;
  const dims = (...names: (string | number)[]) =>
    new TensorShapeProto({ dim: names.map((n) => (typeof n === 'number' ? { dimValue: n } : { dimParam: n })) });
  const input = (name: string) => ({
    name,
    type: { tensorType: { elemType: TensorProto.DataType.INT64, shape: dims('batch', 'sequence') } },
  });
  const graph = new onnx.GraphProto({
    name: 'tiny-embedder',
    node: [
      { opType: 'Gather', input: ['embedding_table', 'input_ids'], output: ['last_hidden_state'], name: 'lookup' },
    ],
    initializer: [
      {
        name: 'embedding_table',
        dims: [vocabSize, TINY_MODEL_DIMENSION],
        dataType: TensorProto.DataType.FLOAT,
        rawData: new Uint8Array(embeddingTable(vocabSize).buffer),
      },
    ],
    input: [input('input_ids'), input('attention_mask'), input('token_type_ids')],
    output: [
      {
        name: 'last_hidden_state',
        type: {
          tensorType: { elemType: TensorProto.DataType.FLOAT, shape: dims('batch', 'sequence', TINY_MODEL_DIMENSION) },
        },
      },
    ],
  });
  const model = new onnx.ModelProto({
    irVersion: 8,
    producerName: 'alfred-tests',
    opsetImport: [{ domain: '', version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

function tokenizerJson(vocab: Record<string, number>): unknown {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: null,
    model: { type: 'WordLevel', vocab, unk_token: '[UNK]' },
  };
}

/**
 * Writes a complete, tiny sentence-embedding model folder (ONNX graph, tokenizer, configs) that
 * transformers.js loads fully offline. Returns the folder path (`<parentDir>/<name>`).
 */
export async function writeTinyOnnxModel(parentDir: string, name = 'tiny-embedder'): Promise<string> {
  const dir = join(parentDir, name);
  await mkdir(join(dir, 'onnx'), { recursive: true });
  const vocab = Object.fromEntries([...SPECIAL, ...TINY_MODEL_WORDS].map((w, i) => [w, i]));
  const vocabSize = Object.keys(vocab).length;
  const json = (file: string, value: unknown) => writeFile(join(dir, file), JSON.stringify(value, null, 2));
  await writeFile(join(dir, 'onnx', 'model.onnx'), modelBytes(await loadOnnx(), vocabSize));
  await json('tokenizer.json', tokenizerJson(vocab));
  await json('tokenizer_config.json', {
    tokenizer_class: 'BertTokenizer',
    model_max_length: 128,
    do_lower_case: true,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    mask_token: '[UNK]',
  });
  await json('config.json', {
    model_type: 'bert',
    architectures: ['BertModel'],
    hidden_size: TINY_MODEL_DIMENSION,
    vocab_size: vocabSize,
  });
  await json('special_tokens_map.json', {
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
  });
  return dir;
}
