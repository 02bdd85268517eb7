// mem0 OSS side of the comparison (bench/mem0.bench.ts). Plain JavaScript run by the Node that npm runs on:
// mem0ai's vector store needs better-sqlite3, whose native module npm builds for that Node. One JSON command
// per stdin line, one JSON answer per stdout line. Telemetry is off (MEM0_TELEMETRY=false, set by the parent).
import { createInterface } from 'node:readline';

let memory;
const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function handle(cmd) {
  switch (cmd.op) {
    case 'init': {
      const { Memory } = await import('mem0ai/oss');
      const embedder = {
        provider: 'openai',
        config: {
          apiKey: 'loopback',
          model: cmd.model,
          baseURL: `${cmd.embeddingsUrl}/v1`,
          embeddingDims: cmd.dimension,
        },
      };
      memory = new Memory({
        embedder,
        vectorStore: {
          provider: 'memory',
          config: { collectionName: 'bench', dimension: cmd.dimension, dbPath: ':memory:' },
        },
        llm: {
          provider: 'openai',
          config: { apiKey: 'loopback', model: 'unused', baseURL: `${cmd.embeddingsUrl}/v1` },
        },
        disableHistory: true,
      });
      return { ok: true };
    }
    case 'add': {
      // infer: false stores each text as it is (no LLM), as Alfred stores a memory.
      const ids = [];
      for (const text of cmd.texts) {
        const res = await memory.add([{ role: 'user', content: text }], { userId: cmd.userId, infer: false });
        ids.push(res.results?.[0]?.id);
      }
      return { ids };
    }
    case 'search': {
      const started = performance.now();
      const res = await memory.search(cmd.q, { filters: { user_id: cmd.userId }, topK: cmd.limit, threshold: 0 });
      return { ms: performance.now() - started, ids: (res.results ?? []).map((r) => r.id) };
    }
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  try {
    answer(await handle(JSON.parse(line)));
  } catch (err) {
    answer({ error: err instanceof Error ? err.message : String(err) });
  }
}
