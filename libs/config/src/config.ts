import { z } from 'zod';

/** Thrown at boot when the environment does not fit a service's schema; lists every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment with a schema keyed by variable names; the only reader of process.env. */
export function parseEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const present: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') present[key] = value;
  }
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
}

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: RegExp) => z.url({ protocol: protocols });

/** A comma-separated list of NATS servers (every server of a cluster, so a client can move to another). */
const natsServers = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(url(/^(nats|tls|ws|wss)$/)).min(1, 'at least one server'));

/** Variables every service reads. */
export const baseEnv = {
  /** One server, or every server of a cluster comma-separated (`nats://n1:4222,nats://n2:4222,nats://n3:4222`). */
  NATS_URL: natsServers.optional(),
  /**
   * Copies of every JetStream stream and KV bucket this process creates: 1 for one server (development), 3 on a
   * three-node cluster (production), so that losing one node loses nothing. Existing R1 streams are raised to it.
   */
  ALFRED_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * How long change events (memory, remediation, checkpoint history; skill executions) are kept, in days; 0 keeps them
   * for ever. The same on both buses: JetStream streams get it as `max_age`, the embedded event logs are compacted to it.
   */
  ALFRED_EVENTS_MAX_AGE_DAYS: z.coerce
    .number()
    .max(36_500)
    .refine((d) => d === 0 || d >= 0.01, 'events are kept 0 (for ever) or at least 0.01 days (past the deduplication window)')
    .default(0),
  ALFRED_DATA_DIR: z.string().default('./.alfred/data'),
  ALFRED_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ALFRED_SUBJECT_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+\.$/, 'a subject prefix is letters, digits, _ or - ending with a dot')
    .optional(),
  ALFRED_BUS_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(5000),
  ALFRED_HEALTH_PORT: port.optional(),
  /** Where the health port listens: loopback unless a probe or scraper outside the host needs it (compose: 0.0.0.0). */
  ALFRED_HEALTH_HOST: z.string().min(1).default('127.0.0.1'),
  ALFRED_SHUTDOWN_DEADLINE_MS: z.coerce.number().int().min(100).default(10_000),
};

/** What either bus takes from the base variables (the embedded bus has no replicas and ignores them). */
export function busSettings(base: { ALFRED_STREAM_REPLICAS: number; ALFRED_EVENTS_MAX_AGE_DAYS: number; ALFRED_BUS_TIMEOUT_MS: number }) {
  return {
    replicas: base.ALFRED_STREAM_REPLICAS,
    eventsMaxAgeMs: base.ALFRED_EVENTS_MAX_AGE_DAYS * 86_400_000,
    defaultTimeoutMs: base.ALFRED_BUS_TIMEOUT_MS,
  };
}

/** Variables of services that embed text (memory, skill-registry). */
export const embeddingEnv = {
  ALFRED_EMBEDDER: z.enum(['auto', 'onnx', 'openai', 'hash']).default('auto'),
  ALFRED_EMBEDDINGS_MODEL_DIR: z.string().optional(),
  ALFRED_EMBEDDINGS_URL: url(/^https?$/).optional(),
  ALFRED_EMBEDDINGS_MODEL: z.string().default('text-embedding-3-small'),
  ALFRED_EMBEDDINGS_API_KEY: z.string().optional(),
  /** Where `alfred models pull` downloads from (a Hugging Face-layout hub or mirror). */
  ALFRED_MODEL_HUB_URL: url(/^https?$/).default('https://huggingface.co'),
  QDRANT_URL: url(/^https?$/).optional(),
  QDRANT_API_KEY: z.string().optional(),
  /**
   * Megabytes the embedded store's in-memory search indexes may hold in this process (scopes loaded on first use, the
   * least recently used dropped past it); default a quarter of the memory the process may use, 256-4096.
   */
  ALFRED_MEMORY_CACHE_MB: z.coerce.number().int().min(16).max(1_048_576).optional(),
};

/** The parsed embedding variables of a service's config (memory, skill-registry), with its data dir. */
export type EmbeddingConfig = z.output<z.ZodObject<typeof embeddingEnv>> & { ALFRED_DATA_DIR: string };

/** The model used when ALFRED_MODEL is unset (a current id from the SDK's model list); #llm uses it too. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

/** Variables of services that call the model. */
export const llmEnv = {
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: url(/^https?$/).optional(),
  ALFRED_MODEL: z.string().default(DEFAULT_MODEL),
  /** Per attempt; the SDK retries 429/5xx ALFRED_MODEL_MAX_RETRIES times with backoff. */
  ALFRED_MODEL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  ALFRED_MODEL_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  /** true: refuse model work without ANTHROPIC_API_KEY (503 MODEL_NOT_CONFIGURED) instead of the deterministic fallbacks. */
  ALFRED_REQUIRE_MODEL: bool.default(false),
};

/** Variables of services that store content (memories, agent files, skills): see #content-safety. */
export const contentSafetyEnv = {
  /**
   * Tenants whose writes have credentials replaced by `[REDACTED:<kind>]` instead of being refused with
   * 422 SECRET_DETECTED (comma-separated tenant ids; `default` is the tenant of the open loopback API).
   */
  ALFRED_SECRETS_REDACT_TENANTS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((t) => t.trim()).filter(Boolean)),
};

/** Variables of services that keep session context. */
export const redisEnv = {
  REDIS_URL: url(/^rediss?$/).optional(),
  /** Prefix of every Redis key (e.g. one per deployment or test run). */
  ALFRED_REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/, 'a Redis prefix is 1-64 letters, digits, :, _ or -').default('alfred:'),
};

export const envHelpers = { bool, port, url };

/** Variables of services that run untrusted code (skill-runner: executable skills; agent-runtime: the agent's bash). */
export const osSandboxEnv = {
  /**
   * `required` (default): untrusted code runs only inside bubblewrap and is refused where it cannot start.
   * `unsafe-off`: no OS layer (Node's permission model still wraps skills) — logged loudly at start.
   */
  ALFRED_OS_SANDBOX: z.enum(['required', 'unsafe-off']).default('required'),
  ALFRED_BWRAP_PATH: z.string().min(1).default('bwrap'),
};
