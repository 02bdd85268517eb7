import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '#logging';
import { startEmbedded, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { loadLocomo, PlainBm25, recallOf, turnContent, type Conversation, type Turn } from './locomo.js';
import { createAgent, round, type BenchRow } from './load.js';

const SECTION = 'quality';
const K = 10;
const BATCH = 500;

/**
 * Retrieval quality on LoCoMo's development half, the protocol: each conversation's turns stored as
 * plain memories of one agent (POST /memories/batch, in order), each question asked through GET /search
 * (limit 10), recall@10 = the share of a question's evidence turns in the results; the same conversations
 * through POST /conversations; a plain BM25 over the same texts in the same run. Per conversation and overall
 * (questions pooled), so a gain that holds on some conversations only shows.
 */
export async function qualityBench(ctx: { logger: Logger }): Promise<BenchRow[]> {
  const data = loadLocomo();
  if ('skipped' in data) {
    console.log(`quality: skipped — ${data.skipped}`);
    return [];
  }
  const rows = await qualityRun('hash (offline default)', { ALFRED_EMBEDDER: 'hash' }, data.conversations, ctx.logger);
  const url = process.env.ALFRED_EMBEDDINGS_URL;
  if (url) {
    const env = {
      ALFRED_EMBEDDER: 'openai',
      ALFRED_EMBEDDINGS_URL: url,
      ...pick('ALFRED_EMBEDDINGS_MODEL', 'ALFRED_EMBEDDINGS_API_KEY'),
    };
    rows.push(
      ...(await qualityRun(
        `openai-compatible (${process.env.ALFRED_EMBEDDINGS_MODEL ?? 'default model'})`,
        env,
        data.conversations,
        ctx.logger,
      )),
    );
  } else
    console.log(
      'quality with an OpenAI-compatible embedder: skipped — set ALFRED_EMBEDDINGS_URL (and _MODEL, ' +
        '_API_KEY) to measure it',
    );
  return rows;
}

const pick = (...names: string[]) =>
  Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]!]] : [])));

interface Tally {
  alfred: number;
  conversation: number;
  bm25: number;
  questions: number;
  latencies: number[];
}

async function qualityRun(
  mode: string,
  env: Record<string, string>,
  conversations: readonly Conversation[],
  logger: Logger,
): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-quality-'));
  const fullEnv = { ALFRED_DATA_DIR: dataDir, ALFRED_LOG_LEVEL: 'silent', ALFRED_BUS_TIMEOUT_MS: '60000', ...env };
  const alfred = await startEmbedded({ env: fullEnv, gateway: loadGatewayConfig(fullEnv), logger, port: 0 });
  const rows: BenchRow[] = [];
  const all: Tally = { alfred: 0, conversation: 0, bm25: 0, questions: 0, latencies: [] };
  try {
    for (const c of conversations) {
      const t = await measureConversation(alfred, c);
      rows.push(row(`LoCoMo ${c.id}`, mode, t));
      all.alfred += t.alfred;
      all.conversation += t.conversation;
      all.bm25 += t.bm25;
      all.questions += t.questions;
      all.latencies.push(...t.latencies);
    }
    rows.push(row(`LoCoMo dev, ${conversations.length} conversations (${all.questions} questions)`, mode, all));
    return rows;
  } finally {
    await alfred.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function measureConversation(alfred: RunningAlfred, c: Conversation): Promise<Tally> {
  const plainAgent = `lc-${c.id}`;
  const convAgent = `lc-${c.id}-conv`;
  for (const agent of [plainAgent, convAgent]) await createAgent(alfred.url, agent);
  const plainIds = await storePlain(alfred.url, plainAgent, c.turns);
  const convIds = await storeConversation(alfred.url, convAgent, c);
  const bm25 = new PlainBm25(c.turns.map(turnContent));
  const tally: Tally = { alfred: 0, conversation: 0, bm25: 0, questions: c.questions.length, latencies: [] };
  for (const q of c.questions) {
    const started = performance.now();
    const plain = await search(alfred.url, plainAgent, q.q);
    tally.latencies.push(performance.now() - started);
    tally.alfred += recallOf(
      q,
      plain.flatMap((id) => plainIds.get(id) ?? []),
    );
    tally.conversation += recallOf(
      q,
      (await search(alfred.url, convAgent, q.q)).flatMap((id) => convIds.get(id) ?? []),
    );
    tally.bm25 += recallOf(
      q,
      bm25.top(q.q, K).map((i) => c.turns[i]!.id),
    );
  }
  return tally;
}

/** Memory id → turn id, storing the turns in order in batches. */
async function storePlain(url: string, agent: string, turns: readonly Turn[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < turns.length; i += BATCH) {
    const batch = turns.slice(i, i + BATCH);
    const res = await post(`${url}/memories/batch`, agent, {
      memories: batch.map((t) => ({ content: turnContent(t) })),
    });
    (res.memories as Array<{ id: string }>).forEach((m, j) => {
      ids.set(m.id, batch[j]!.id);
    });
  }
  return ids;
}

/** The same turns as one conversation (in requests of whole sessions, at most BATCH messages each). */
async function storeConversation(url: string, agent: string, c: Conversation): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const chunks: Turn[][] = [];
  for (const t of c.turns) {
    const last = chunks.at(-1);
    const newSession = last !== undefined && last.at(-1)!.time !== t.time;
    if (!last || (newSession && last.length + sessionLength(c.turns, t) > BATCH)) chunks.push([t]);
    else last.push(t);
  }
  for (const chunk of chunks) {
    const messages = chunk.map((t) => ({ speaker: t.speaker, content: t.text, ...(t.time ? { time: t.time } : {}) }));
    const res = await post(`${url}/conversations`, agent, { conversation_id: c.id, messages });
    (res.memories as Array<{ id: string }>).forEach((m, j) => {
      ids.set(m.id, chunk[j]!.id);
    });
  }
  return ids;
}

const sessionLength = (turns: readonly Turn[], first: Turn) => turns.filter((t) => t.time === first.time).length;

async function search(url: string, agent: string, q: string): Promise<string[]> {
  const res = await fetch(`${url}/search?q=${encodeURIComponent(q)}&limit=${K}`, {
    headers: { 'x-alfred-agent': agent },
  });
  if (!res.ok) throw new Error(`search: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { results: Array<{ id: string }> }).results.map((r) => r.id);
}

async function post(url: string, agent: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-alfred-agent': agent },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

function row(name: string, mode: string, t: Tally): BenchRow {
  const sorted = [...t.latencies].sort((a, b) => a - b);
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  const [alfred, conversation, bm25] = [t.alfred, t.conversation, t.bm25].map((x) => round(x / t.questions));
  return {
    section: SECTION,
    name,
    mode,
    connections: 1,
    rps: 0,
    p50: at(0.5),
    p99: at(0.99),
    errors: 0,
    metrics: {
      'recall@10 memories': alfred!,
      'recall@10 conversation': conversation!,
      'recall@10 BM25': bm25!,
      'memories / BM25': round(alfred! / bm25!),
      'conversation / BM25': round(conversation! / bm25!),
      questions: t.questions,
    },
  };
}
