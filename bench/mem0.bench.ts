import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from '#logging';
import { generatedText, prng } from '#vector-store';
import { startEmbedded, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { startEmbeddingsServer } from './embeddings-server.js';
import { loadLocomo, PlainBm25, recallOf, turnContent, type Conversation } from './locomo.js';
import { createAgent, round, sequentialHttp, timeSequential, type BenchRow } from './load.js';
import { locomoLengthQuery } from './memory.bench.js';

const SECTION = 'mem0';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SIZE = 10_000;
const DIMENSION = 384;

/** One mem0 OSS process (bench/mem0-worker.mjs) driven by JSON lines. */
class Mem0 {
  private readonly answers: AsyncIterator<string>;
  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  static async start(home: string): Promise<Mem0> {
    // npm runs on the machine's Node, which better-sqlite3 (mem0's vector store) was built for.
    const node = process.env.npm_node_execpath ?? 'node';
    const child = spawn(node, [join(ROOT, 'bench', 'mem0-worker.mjs')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: home, MEM0_TELEMETRY: 'false' },
    });
    child.stderr.resume();
    return new Mem0(child);
  }

  async call<T>(command: Record<string, unknown>): Promise<T> {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
    const { value, done } = await this.answers.next();
    if (done) throw new Error('mem0 worker exited');
    const answer = JSON.parse(value) as T & { error?: string };
    if (answer.error) throw new Error(answer.error);
    return answer;
  }

  stop(): void {
    this.child.kill();
  }
}

/**
 * Alfred beside mem0 OSS (npm mem0ai, infer: false, its in-memory vector store), both embedding with the same
 * hashing model through a loopback OpenAI-compatible endpoint: recall@10 on LoCoMo's development half, and
 * search latency at 10,000 memories with LoCoMo-length questions (Alfred through HTTP, mem0 in-process).
 */
export async function mem0Bench(ctx: { logger: Logger }): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-bench-mem0-'));
  const embeddings = await startEmbeddingsServer(DIMENSION);
  const mem0 = await Mem0.start(dir);
  let alfred: RunningAlfred | undefined;
  try {
    try {
      await mem0.call({ op: 'init', embeddingsUrl: embeddings.url, model: embeddings.model, dimension: DIMENSION });
    } catch (err) {
      console.log(
        `mem0: skipped — mem0ai could not start (${(err as Error).message}); npm install builds its better-sqlite3`,
      );
      return [];
    }
    const env = {
      ALFRED_DATA_DIR: join(dir, 'alfred'),
      ALFRED_LOG_LEVEL: 'silent',
      ALFRED_BUS_TIMEOUT_MS: '60000',
      ALFRED_EMBEDDER: 'openai',
      ALFRED_EMBEDDINGS_URL: embeddings.url,
      ALFRED_EMBEDDINGS_MODEL: embeddings.model,
    };
    alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger: ctx.logger, port: 0 });
    const rows = await recallRows(alfred, mem0);
    rows.push(...(await speedRows(alfred, mem0)));
    return rows;
  } finally {
    mem0.stop();
    await alfred?.stop();
    await embeddings.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function recallRows(alfred: RunningAlfred, mem0: Mem0): Promise<BenchRow[]> {
  const data = loadLocomo();
  if ('skipped' in data) {
    console.log(`mem0 recall: skipped — ${data.skipped}`);
    return [];
  }
  const sums = { alfred: 0, mem0: 0, bm25: 0, questions: 0 };
  for (const c of data.conversations) {
    const r = await recallOn(alfred, mem0, c);
    sums.alfred += r.alfred;
    sums.mem0 += r.mem0;
    sums.bm25 += r.bm25;
    sums.questions += c.questions.length;
  }
  const [a, m, b] = [sums.alfred, sums.mem0, sums.bm25].map((x) => round(x / sums.questions));
  const metrics = {
    'recall@10 Alfred': a!,
    'recall@10 mem0': m!,
    'recall@10 BM25': b!,
    'Alfred / BM25': round(a! / b!),
    'mem0 / BM25': round(m! / b!),
    questions: sums.questions,
  };
  return [
    {
      section: SECTION,
      name: `LoCoMo dev recall (${data.conversations.length} conversations)`,
      mode: 'same loopback embedder',
      connections: 1,
      rps: 0,
      p50: 0,
      p99: 0,
      errors: 0,
      metrics,
    },
  ];
}

async function recallOn(alfred: RunningAlfred, mem0: Mem0, c: Conversation) {
  const agent = `m0-${c.id}`;
  await createAgent(alfred.url, agent);
  const texts = c.turns.map(turnContent);
  const alfredIds = new Map<string, string>();
  for (let i = 0; i < texts.length; i += 500) {
    const res = await post(`${alfred.url}/memories/batch`, agent, {
      memories: texts.slice(i, i + 500).map((content) => ({ content })),
    });
    res.memories.forEach((m: { id: string }, j: number) => {
      alfredIds.set(m.id, c.turns[i + j]!.id);
    });
  }
  const { ids } = await mem0.call<{ ids: string[] }>({ op: 'add', userId: agent, texts });
  const mem0Ids = new Map(ids.map((id, i) => [id, c.turns[i]!.id]));
  const bm25 = new PlainBm25(texts);
  const out = { alfred: 0, mem0: 0, bm25: 0 };
  for (const q of c.questions) {
    const found = await fetch(`${alfred.url}/search?q=${encodeURIComponent(q.q)}&limit=10`, {
      headers: { 'x-alfred-agent': agent },
    }).then((r) => r.json() as Promise<{ results: Array<{ id: string }> }>);
    out.alfred += recallOf(
      q,
      found.results.flatMap((r) => alfredIds.get(r.id) ?? []),
    );
    const m = await mem0.call<{ ids: string[] }>({ op: 'search', userId: agent, q: q.q, limit: 10 });
    out.mem0 += recallOf(
      q,
      m.ids.flatMap((id) => mem0Ids.get(id) ?? []),
    );
    out.bm25 += recallOf(
      q,
      bm25.top(q.q, 10).map((i) => c.turns[i]!.id),
    );
  }
  return out;
}

async function speedRows(alfred: RunningAlfred, mem0: Mem0): Promise<BenchRow[]> {
  const random = prng(11);
  const texts = Array.from({ length: SIZE }, () => generatedText(random));
  await createAgent(alfred.url, 'speed');
  for (let i = 0; i < texts.length; i += 500)
    await post(`${alfred.url}/memories/batch`, 'speed', {
      memories: texts.slice(i, i + 500).map((content) => ({ content })),
    });
  for (let i = 0; i < texts.length; i += 1000)
    await mem0.call({ op: 'add', userId: 'speed', texts: texts.slice(i, i + 1000) });
  const queries = Array.from({ length: 300 }, () => locomoLengthQuery(random));
  const path = (i: number) => `/search?q=${encodeURIComponent(queries[i % queries.length]!)}&limit=10`;
  const a = await sequentialHttp(
    { section: SECTION, name: `Alfred GET /search at ${SIZE} memories`, mode: 'embedded, HTTP' },
    alfred.url,
    {
      times: 300,
      headers: { 'x-alfred-agent': 'speed' },
      path,
      warmup: 30,
    },
  );
  // mem0's searches take hundreds of milliseconds at this size: fewer of them give its percentiles.
  const inner: number[] = [];
  for (let i = 0; i < 10; i++) await mem0.call({ op: 'search', userId: 'speed', q: queries[i]!, limit: 10 });
  const m = await timeSequential(100, async (i) =>
    inner.push((await mem0.call<{ ms: number }>({ op: 'search', userId: 'speed', q: queries[i]!, limit: 10 })).ms),
  );
  inner.sort((x, y) => x - y);
  const p = (q: number) => round(inner[Math.min(inner.length - 1, Math.floor(q * inner.length))]!);
  const mem0Row: BenchRow = {
    section: SECTION,
    name: `mem0 search at ${SIZE} memories`,
    mode: 'in-process (timed inside)',
    connections: 1,
    rps: Math.round(1000 / m.mean),
    p50: p(0.5),
    p99: p(0.99),
    errors: 0,
  };
  const ratio = {
    'mem0 p50 / Alfred p50': round(mem0Row.p50 / a.p50),
    'mem0 p99 / Alfred p99': round(mem0Row.p99 / a.p99),
    target: '≥ 20×',
  };
  return [a, mem0Row, { ...a, name: `speed-up at ${SIZE} memories`, mode: 'ratio', metrics: ratio }];
}

async function post(url: string, agent: string, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-alfred-agent': agent },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}
