import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { Logger } from '#logging';
import { generatedText, prng } from '#vector-store';
import { startEmbedded, startOverNats, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createAgent, load, sequentialHttp, withOverhead, type BenchRow } from './load.js';

const SECTION = 'memory';

/**
 * A bare fastify handler: the floor every gateway number is compared with, measured in the same run (first row: 1
 * connection, sequential).
 */
async function bareHandler(): Promise<BenchRow[]> {
  const app = Fastify({ logger: false });
  const memory = { id: randomUUID(), content: 'User prefers dark mode', importance: 0.5, tags: [], source: 'daily' };
  app.get('/memories/:id', async () => memory);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/memories/${memory.id}`;
  try {
    return [
      await sequentialHttp({ section: SECTION, name: 'bare fastify GET', mode: 'none', note: 'baseline' }, url, {
        times: 2_000,
      }),
      await load(SECTION, 'bare fastify GET', 'none', { url, connections: 16 }),
    ];
  } finally {
    await app.close();
  }
}

/** Alfred in one mode with the bench's agent created. */
async function start(
  mode: 'embedded' | 'nats',
  dataDir: string,
  logger: Logger,
  natsUrl?: string,
): Promise<RunningAlfred> {
  const env = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'silent',
    ALFRED_BUS_TIMEOUT_MS: '30000',
  };
  const options = { env, gateway: loadGatewayConfig(env), logger, port: 0 };
  const alfred = await (mode === 'embedded'
    ? startEmbedded(options)
    : startOverNats({
        ...options,
        natsUrl: natsUrl!,
        subjectPrefix: `bench-${randomUUID().slice(0, 8)}.`,
        ephemeral: true,
      }));
  await createAgent(alfred.url, 'bench');
  return alfred;
}

async function post(url: string, body: unknown, agent = 'bench') {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-alfred-agent': agent },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

const SEARCHES = ['topic 12 memory', 'seed memory about topic 3', 'memory 42', 'topic 30 seed'];

/**
 * GET by id, POST and search through the gateway in one mode; 1-connection rows are sequential, with the overhead over
 * `bare`.
 */
async function gatewayRows(
  mode: 'embedded' | 'nats',
  logger: Logger,
  bare: BenchRow,
  natsUrl?: string,
): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), `alfred-bench-${mode}-`));
  const alfred = await start(mode, dataDir, logger, natsUrl);
  try {
    const seeded = await post(`${alfred.url}/memories/batch`, {
      memories: Array.from({ length: 500 }, (_, i) => ({
        content: `seed memory ${i} about topic ${i % 37}`,
        importance: (i % 10) / 10,
      })),
    });
    const id = seeded.memories[0].id as string;
    const headers = { 'content-type': 'application/json', 'x-alfred-agent': 'bench' };
    const rows: BenchRow[] = [];
    const byId = `${alfred.url}/memories/${id}`;
    rows.push(
      withOverhead(
        await sequentialHttp({ section: SECTION, name: 'GET /memories/{id}', mode }, byId, { times: 2_000, headers }),
        bare,
      ),
    );
    rows.push(await load(SECTION, 'GET /memories/{id}', mode, { url: byId, headers, connections: 16 }));
    rows.push(
      await load(SECTION, 'POST /memories', mode, {
        url: `${alfred.url}/memories`,
        method: 'POST',
        headers,
        body: JSON.stringify({ content: 'The user likes espresso in the morning', importance: 0.6, tags: ['coffee'] }),
        connections: 4,
      }),
    );
    const search = (i: number) => `/search?q=${encodeURIComponent(SEARCHES[i % SEARCHES.length]!)}`;
    const total = (await (await fetch(`${alfred.url}/memories?limit=1`, { headers })).json()) as {
      pagination: { total: number };
    };
    rows.push(
      withOverhead(
        await sequentialHttp(
          { section: SECTION, name: `GET /search (${total.pagination.total} memories)`, mode },
          alfred.url,
          { times: 300, headers, path: search, warmup: 20 },
        ),
        bare,
      ),
    );
    return rows;
  } finally {
    await alfred.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * LoCoMo-length questions: how many content terms (after the analyser drops stop words) LoCoMo's development
 * questions have, as counts per length (mean 5.6; "What did Caroline research?" has 2).
 */
const QUESTION_TERMS: ReadonlyArray<readonly [terms: number, questions: number]> = [
  [1, 1],
  [2, 13],
  [3, 70],
  [4, 137],
  [5, 173],
  [6, 157],
  [7, 96],
  [8, 60],
  [9, 32],
  [10, 12],
  [11, 7],
  [13, 1],
  [14, 1],
];

/** A query of generated words whose length follows QUESTION_TERMS. */
export function locomoLengthQuery(random: () => number): string {
  const total = QUESTION_TERMS.reduce((s, [, n]) => s + n, 0);
  let pick = random() * total;
  const terms = QUESTION_TERMS.find(([, n]) => (pick -= n) < 0)?.[0] ?? 6;
  const words: string[] = [];
  while (words.length < terms) words.push(...generatedText(random).split(' '));
  return words.slice(0, terms).join(' ');
}

/** /search latency as the collection grows, with the hashing embedder, embedded mode, beside the bare handler. */
async function searchScale(logger: Logger, sizes: readonly number[], bare: BenchRow): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-scale-'));
  const alfred = await start('embedded', dataDir, logger);
  const rows: BenchRow[] = [];
  // Realistic text: 8-24 words from a 4,000-word vocabulary with a Zipf-like skew (a few common words,
  // a long tail), so neither the vector index nor the full-text index sees a degenerate corpus.
  const random = prng(7);
  let stored = 0;
  try {
    for (const size of sizes) {
      const started = performance.now();
      while (stored < size) {
        const n = Math.min(500, size - stored);
        const memories = Array.from({ length: n }, () => ({
          content: generatedText(random),
          importance: Math.round(random() * 10) / 10,
        }));
        await post(`${alfred.url}/memories/batch`, { memories });
        stored += n;
      }
      const fill = Math.round(performance.now() - started);
      const queries = Array.from({ length: 256 }, () => locomoLengthQuery(random));
      const path = (i: number) => `/search?q=${encodeURIComponent(queries[i % queries.length]!)}`;
      // Background maintenance (compaction, vector-index retraining) runs after a large fill; searching
      // through it for a while first measures the steady state rather than the rebuild.
      const warmup = size >= 100_000 ? 1500 : 100;
      const note =
        `filled in ${fill} ms; LoCoMo-length questions; ${warmup} warm-up ` +
        `queries${size >= 100_000 ? '; target p50 ≤ 3 ms, p99 ≤ 10 ms' : ''}`;
      const measured = await sequentialHttp(
        { section: SECTION, name: `GET /search at ${size} memories`, mode: 'embedded', note },
        alfred.url,
        {
          times: 500,
          headers: { 'x-alfred-agent': 'bench' },
          path,
          warmup,
        },
      );
      rows.push(withOverhead(measured, bare));
    }
    return rows;
  } finally {
    await alfred.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function memoryBench(ctx: { logger: Logger; natsUrl?: string; quick: boolean }): Promise<BenchRow[]> {
  const bare = await bareHandler();
  const rows = [...bare, ...(await gatewayRows('embedded', ctx.logger, bare[0]!))];
  if (ctx.natsUrl) rows.push(...(await gatewayRows('nats', ctx.logger, bare[0]!, ctx.natsUrl)));
  rows.push(...(await searchScale(ctx.logger, ctx.quick ? [1000, 10_000] : [1000, 10_000, 100_000], bare[0]!)));
  return rows;
}
