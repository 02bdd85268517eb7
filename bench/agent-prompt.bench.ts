import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '#logging';
// The loopback model directly, not through #testing: that entry also holds jest suites, which stay out of the build.
import { LoopbackPromptCache } from '../libs/testing/src/anthropic-loopback-cache.js';
import { AnthropicLoopback, type RecordedRequest } from '../libs/testing/src/anthropic-loopback.js';
import { startEmbedded, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import type { BenchRow } from './load.js';

const SECTION = 'agent-prompt';
const ROUNDS = 20;
const EXEC_SKILLS = 200;

interface System {
  readonly alfred: RunningAlfred;
  readonly model: AnthropicLoopback;
  post(path: string, body: unknown): Promise<any>;
  stop(): Promise<void>;
}

async function start(logger: Logger, extra: Record<string, string> = {}): Promise<System> {
  const model = await AnthropicLoopback.start({ promptCache: { minTokens: 1024 } });
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-prompt-'));
  const env = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'silent',
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: model.apiKey,
    ALFRED_SKILLS_WATCH: 'false',
    ALFRED_MAX_TOOL_ROUNDS: '50',
    ...extra,
  };
  const alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger, port: 0 });
  const post = async (path: string, body: unknown) =>
    (
      await fetch(`${alfred.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  return {
    alfred,
    model,
    post,
    stop: async () => {
      await alfred.stop();
      await model.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const turnCalls = (model: AnthropicLoopback) =>
  model.messageRequests.filter((r) => String(r.body.system?.[0]?.text ?? '').startsWith('You are '));

/** The same requests through a fresh cache with only the system prompt's breakpoint: the layout before this change. */
function systemOnlyShare(requests: readonly RecordedRequest[]): number {
  const cache = new LoopbackPromptCache(1024);
  let read = 0;
  let total = 0;
  for (const r of requests) {
    const messages = (r.body.messages as any[]).map((m) =>
      typeof m.content === 'string' ? m : { ...m, content: m.content.map(({ cache_control: _c, ...b }: any) => b) },
    );
    const u = cache.usage({ ...r.body, messages });
    read += u.cache_read_input_tokens;
    total += u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  }
  return read / total;
}

/**
 * A 20-round turn through the loopback model that simulates prompt caching: the share of input tokens read from cache.
 */
async function cacheShare(logger: Logger): Promise<BenchRow> {
  const sys = await start(logger, { ALFRED_MEMORY_CONTEXT_LIMIT: '3' });
  try {
    await sys.post('/memories', { content: 'User prefers concise answers with the commands to run' });
    const session = (await sys.post('/sessions', {})).id as string;
    for (let i = 0; i < ROUNDS; i++) {
      sys.model.script({
        content: [
          {
            type: 'tool_use',
            name: 'bash',
            input: { command: `echo "step ${i}: $(printf 'log line %.0s' $(seq 1 40))"` },
          },
        ],
        stopReason: 'tool_use',
      });
    }
    sys.model.reply('All twenty steps ran.');
    const result = await sys.post(`/sessions/${session}/turns`, {
      message: 'Run the twenty steps of the checklist, one command each.',
    });
    const u = result.usage;
    const input = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
    const share = u.cache_read_input_tokens / input;
    const baseline = systemOnlyShare(turnCalls(sys.model));
    return {
      section: SECTION,
      name: `${ROUNDS}-round turn: input read from cache`,
      mode: 'embedded',
      connections: 1,
      rps: 0,
      p50: Math.round(share * 1000) / 10,
      p99: 0,
      errors: result.status === 'completed' && result.rounds === ROUNDS ? 0 : 1,
      note:
        `${(share * 100).toFixed(1)}% of ${input} input tokens read from cache (${u.model_calls} calls); ` +
        `system-only breakpoint, same requests: ${(baseline * 100).toFixed(1)}%`,
    };
  } finally {
    await sys.stop();
  }
}

const CODE = `export async function execute() { return { success: true, result: 'ok' }; }`;

/** Tools' tokens in one turn's request with no executable skills, then with 200 in the catalog. */
async function toolCost(logger: Logger): Promise<BenchRow[]> {
  const sys = await start(logger, { ALFRED_MEMORY_CONTEXT_LIMIT: '0', ALFRED_SKILL_INDEX_TTL_MS: '0' });
  const tokensOfTools = async () => {
    sys.model.clear();
    sys.model.reply('ok');
    const session = (await sys.post('/sessions', {})).id as string;
    await sys.post(`/sessions/${session}/turns`, { message: 'hello' });
    return Math.ceil(JSON.stringify(turnCalls(sys.model)[0]!.body.tools).length / 4);
  };
  try {
    const before = await tokensOfTools();
    let schemas = 0;
    for (let i = 0; i < EXEC_SKILLS; i++) {
      const id = `bench-tool-${i}`;
      const created = await sys.post('/executable-skills', {
        id,
        description: `Benchmark tool number ${i}: converts a value of kind ${i} into its canonical form.`,
        parameters: { value: { type: 'string', required: true, description: 'The value to convert' } },
        code: CODE,
      });
      schemas += Math.ceil(
        JSON.stringify({
          name: created.tool_name,
          description: created.description,
          input_schema: created.input_schema,
        }).length / 4,
      );
    }
    const after = await tokensOfTools();
    const row = (name: string, tokens: number, note: string): BenchRow => ({
      section: SECTION,
      name,
      mode: 'embedded',
      connections: 1,
      rps: 0,
      p50: tokens,
      p99: 0,
      errors: 0,
      note,
    });
    return [
      row('tools tokens/turn, 0 executable skills', before, 'core, skill and management tools'),
      row(
        `tools tokens/turn, ${EXEC_SKILLS} executable skills`,
        after,
        `flat: ${after - before} more; offering every one as a tool would add ~${schemas}`,
      ),
    ];
  } finally {
    await sys.stop();
  }
}

/** Prompt caching and the cost of tools per turn, through the loopback model. */
export async function agentPromptBench(ctx: { logger: Logger }): Promise<BenchRow[]> {
  return [await cacheShare(ctx.logger), ...(await toolCost(ctx.logger))];
}
