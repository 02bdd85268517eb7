import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '#logging';
import { AnthropicLoopback } from '../libs/testing/src/anthropic-loopback.js';
import { startEmbedded } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { timeSequential, type BenchRow } from './load.js';

const SECTION = 'capabilities';
const TIMES = 60;

/** A conversation long enough that compaction has something to summarise. */
function conversation(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content:
      `${i % 2 === 0 ? 'Question' : 'Answer'} ${i}: the deploy script step ${i} copies the build, ` +
      `checks the health endpoint and rolls back on failure.`,
  }));
}

async function call(url: string, path: string, body: unknown, agent: string): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-alfred-agent': agent },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * /compact and /learn through the gateway on the embedded default: with the loopback Messages API (no added
 * latency, so the rows show Alfred's own cost around a model call: prompt, token counting, validation, storage)
 * and without a model (the deterministic fallbacks). Each compaction runs on a fresh 40-message session.
 */
export async function capabilitiesBench(options: { logger: Logger }): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const withModel of [true, false]) {
    const model = withModel ? await AnthropicLoopback.start() : undefined;
    const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-cap-'));
    const env = {
      ALFRED_DATA_DIR: dataDir,
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'silent',
      ...(model ? { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: model.apiKey } : {}),
    };
    const alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger: options.logger, port: 0 });
    const mode = withModel ? 'embedded, loopback model' : 'embedded, no model';
    try {
      const sessions: string[] = [];
      for (let i = 0; i < TIMES; i++) {
        const s = await call(alfred.url, '/sessions', {}, 'bench');
        await call(alfred.url, `/sessions/${s.id}/messages`, { messages: conversation(40) }, 'bench');
        sessions.push(s.id);
      }
      const compact = await timeSequential(TIMES, async (i) => {
        model?.reply(JSON.stringify({ summary: `Summary ${i}: the deploy script steps so far.` }));
        await call(alfred.url, '/compact', { session_id: sessions[i], preserve_recent: 4 }, 'bench');
      });
      const learn = await timeSequential(TIMES, async (i) => {
        model?.reply(
          JSON.stringify({
            status: 'updated',
            content: `# USER.md\n\n- Preference number ${i}`,
            changes: [`added: preference ${i}`],
          }),
        );
        await call(
          alfred.url,
          '/learn',
          { target: 'user', observation: `Preference number ${i}: likes option ${i * 7}`, confidence: 0.9 },
          'bench',
        );
      });
      for (const [name, t] of [
        ['POST /compact (40 messages)', compact],
        ['POST /learn', learn],
      ] as const) {
        rows.push({
          section: SECTION,
          name,
          mode,
          connections: 1,
          rps: Math.round(1000 / t.mean),
          p50: t.p50,
          p99: t.p99,
          errors: 0,
          note: 'target < 100 ms',
        });
      }
    } finally {
      await alfred.stop();
      await model?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}
