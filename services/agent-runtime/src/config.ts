import { join } from 'node:path';
import { z } from 'zod';
import { baseEnv, contentSafetyEnv, envHelpers, llmEnv, osSandboxEnv, parseEnv, redisEnv, turnEnv } from '#config';

const int = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** Variables of the agent loop (besides the base, Redis and model ones). */
export const agentEnv = {
  ALFRED_WORKSPACES_DIR: z.string().optional().meta({
    description: "where each agent's workspace lives: `<dir>/<tenant>/<agent>/`",
    shownDefault: '`$ALFRED_DATA_DIR/workspaces`',
  }),
  ALFRED_API_URL: envHelpers
    .url(/^https?$/)
    .optional()
    .meta({
      description:
        "the URL agents' skills call (`$ALFRED_API_URL` in bash). `npm start` uses the port the gateway really " +
        'listens on; a separately run agent-runtime needs it set (compose: `http://gateway:8080`)',
      shownDefault: '`http://127.0.0.1:$ALFRED_API_PORT`',
    }),
  ALFRED_API_PORT: envHelpers.port
    .default(8080)
    .describe("gateway port (agents' skills reach it here unless `ALFRED_API_URL` says)"),
  PATH: z
    .string()
    .default('/usr/local/bin:/usr/bin:/bin')
    .describe("`bash`'s PATH when the OS sandbox is off (inside it PATH is fixed)"),
  ALFRED_MAX_TOOL_ROUNDS: int(1, 1000, 25).describe('model rounds of one turn before it fails with TOOL_ROUND_LIMIT'),
  ALFRED_MAX_OUTPUT_TOKENS: int(16, 128_000, 8_192).describe('the most tokens one model answer of a turn may have'),
  ALFRED_CONTEXT_WINDOW: int(1_000, 10_000_000, 200_000).describe("the model's context window in tokens"),
  ALFRED_COMPACT_THRESHOLD: z.coerce
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .describe('the share of the context window at which a turn folds its older messages into a summary'),
  ALFRED_TURN_LEASE_MS: int(500, 600_000, 15_000).describe(
    "how long a session's turn lease lives without renewal: a dead worker's turn is taken over after it",
  ),
  ALFRED_TURN_HEARTBEAT_MS: int(100, 60_000, 2_000).describe(
    'how often a running turn tells its listeners it is alive (they call it lost after three missed beats)',
  ),
  ALFRED_CONFIRM_TIMEOUT_MS: int(100, 3_600_000, 300_000).describe(
    'how long a turn waits for the answer to a confirmation it asked for; unanswered, the agent goes on without it',
  ),
  ALFRED_MAX_CONCURRENT_TURNS: int(1, 10_000, 16).describe(
    'agent turns a worker runs at once; more wait for a slot, taking turns by tenant',
  ),
  ALFRED_MAX_TENANT_TURNS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .meta({ description: 'of those, how many one tenant may hold', shownDefault: 'half, at least 1' }),
  ALFRED_BASH_TIMEOUT_MS: int(100, 3_600_000, 120_000).describe("one `bash` call's time limit"),
  ALFRED_WORKSPACE_QUOTA_MB: int(1, 1_048_576, 1024).describe(
    "disk one agent's workspace may hold: a `bash` call cannot add more than what is left (plus 8 MiB) and is " +
      'stopped when it tries; later writes fail with "File too large" and a note; the file tools refuse; nothing ' +
      'stored is removed',
  ),
  ALFRED_TENANT_WORKSPACES_QUOTA_MB: int(1, 1_048_576, 4096).describe(
    "disk all of a tenant's workspaces may hold together",
  ),
  ALFRED_TOOL_OUTPUT_MAX: int(1_000, 10_000_000, 50_000).describe(
    "characters of one `bash` call's output kept for the model",
  ),
  ALFRED_MEMORY_CONTEXT_LIMIT: int(0, 50, 5).describe("memories recalled into each turn's context (0: none)"),
  ALFRED_SKILL_INDEX_TTL_MS: int(0, 600_000, 2_000).describe(
    'how long a worker reuses the skill index and the executable-skill tool list between turns',
  ),
};

export const agentRuntimeEnvSchema = z.object({
  ...baseEnv,
  ...redisEnv,
  ...llmEnv,
  ...turnEnv,
  ...agentEnv,
  ...osSandboxEnv,
  ...contentSafetyEnv,
});
export type AgentRuntimeConfig = z.output<typeof agentRuntimeEnvSchema>;

export function loadAgentRuntimeConfig(env: NodeJS.ProcessEnv): AgentRuntimeConfig {
  return parseEnv(agentRuntimeEnvSchema, env);
}

/** The gateway address agents reach: the running gateway's when known, else the configured or default one. */
export function apiUrlOf(config: AgentRuntimeConfig, listening?: () => string | undefined): () => string {
  const configured = config.ALFRED_API_URL ?? `http://127.0.0.1:${config.ALFRED_API_PORT}`;
  return () => listening?.() ?? configured;
}

/** The workspaces' disk quotas in bytes. */
export function workspaceQuotaOf(config: AgentRuntimeConfig): { folderBytes: number; tenantBytes: number } {
  return {
    folderBytes: config.ALFRED_WORKSPACE_QUOTA_MB * 1024 * 1024,
    tenantBytes: config.ALFRED_TENANT_WORKSPACES_QUOTA_MB * 1024 * 1024,
  };
}

export function workspacesDirOf(config: AgentRuntimeConfig): string {
  return config.ALFRED_WORKSPACES_DIR ?? join(config.ALFRED_DATA_DIR, 'workspaces');
}
