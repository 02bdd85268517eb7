import { join } from 'node:path';
import { z } from 'zod';
import { baseEnv, contentSafetyEnv, envHelpers, llmEnv, osSandboxEnv, parseEnv, redisEnv } from '#config';

const int = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** Variables of the agent loop (besides the base, Redis and model ones). */
export const agentEnv = {
  /** Where each agent's workspace lives: `<dir>/<tenant>/<agent>/` (default `<ALFRED_DATA_DIR>/workspaces`). */
  ALFRED_WORKSPACES_DIR: z.string().optional(),
  /**
   * The gateway URL skills' curl commands call (given to bash as ALFRED_API_URL). In one process with the gateway
   * (`npm start`) the gateway's real listen address is used instead; on its own the default is the loopback
   * address at ALFRED_API_PORT.
   */
  ALFRED_API_URL: envHelpers.url(/^https?$/).optional(),
  /** The gateway's port, for the default ALFRED_API_URL. */
  ALFRED_API_PORT: envHelpers.port.default(8080),
  /** PATH for bash only when the operator turned the OS sandbox off (inside the sandbox PATH is fixed). */
  PATH: z.string().default('/usr/local/bin:/usr/bin:/bin'),
  ALFRED_MAX_TOOL_ROUNDS: int(1, 1000, 25),
  ALFRED_TURN_DEADLINE_MS: int(1_000, 3_600_000, 600_000),
  ALFRED_MAX_OUTPUT_TOKENS: int(16, 128_000, 8_192),
  /** The model's context window in tokens; compaction starts at ALFRED_COMPACT_THRESHOLD of it. */
  ALFRED_CONTEXT_WINDOW: int(1_000, 10_000_000, 200_000),
  ALFRED_COMPACT_THRESHOLD: z.coerce.number().gt(0).max(1).default(0.8),
  /** How long a session's turn lease lives without renewal (a dead worker's lease expires after it). */
  ALFRED_TURN_LEASE_MS: int(500, 600_000, 15_000),
  ALFRED_TURN_HEARTBEAT_MS: int(100, 60_000, 2_000),
  ALFRED_CONFIRM_TIMEOUT_MS: int(100, 3_600_000, 300_000),
  /** Turns one worker runs at once; more wait for a slot (a worker's share of model calls in flight). */
  ALFRED_MAX_CONCURRENT_TURNS: int(1, 10_000, 16),
  /** Of those, how many one tenant may run at once (default: half, at least 1); waiting turns take turns by tenant. */
  ALFRED_MAX_TENANT_TURNS: z.coerce.number().int().min(1).max(10_000).optional(),
  ALFRED_BASH_TIMEOUT_MS: int(100, 3_600_000, 120_000),
  /** Disk one agent's workspace may hold (MiB): bash calls and file tools cannot add past it (plus a few MiB). */
  ALFRED_WORKSPACE_QUOTA_MB: int(1, 1_048_576, 1024),
  /** Disk all of one tenant's workspaces may hold together (MiB). */
  ALFRED_TENANT_WORKSPACES_QUOTA_MB: int(1, 1_048_576, 4096),
  ALFRED_TOOL_OUTPUT_MAX: int(1_000, 10_000_000, 50_000),
  ALFRED_MEMORY_CONTEXT_LIMIT: int(0, 50, 5),
  /** How long a worker reuses the level-1 skill index and the executable-skill tool list between turns. */
  ALFRED_SKILL_INDEX_TTL_MS: int(0, 600_000, 2_000),
};

export const agentRuntimeEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...llmEnv, ...agentEnv, ...osSandboxEnv, ...contentSafetyEnv });
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
  return { folderBytes: config.ALFRED_WORKSPACE_QUOTA_MB * 1024 * 1024, tenantBytes: config.ALFRED_TENANT_WORKSPACES_QUOTA_MB * 1024 * 1024 };
}

export function workspacesDirOf(config: AgentRuntimeConfig): string {
  return config.ALFRED_WORKSPACES_DIR ?? join(config.ALFRED_DATA_DIR, 'workspaces');
}
