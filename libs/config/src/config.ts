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
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .pipe(z.array(url(/^(nats|tls|ws|wss)$/)).min(1, 'at least one server'));

/** Variables every service reads. */
export const baseEnv = {
  NATS_URL: natsServers
    .optional()
    .describe(
      'set: services run over NATS (one server, or every server of a cluster comma-separated: ' +
        '`nats://n1:4222,nats://n2:4222`); unset: `npm start` embeds everything',
    ),
  ALFRED_STREAM_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe(
      'copies of each JetStream stream and KV bucket (3 on a three-node cluster, so losing one node loses nothing); ' +
        'existing streams with fewer are raised to it',
    ),
  ALFRED_EVENTS_MAX_AGE_DAYS: z.coerce
    .number()
    .max(36_500)
    .refine(
      (d) => d === 0 || d >= 0.01,
      'events are kept 0 (for ever) or at least 0.01 days (past the deduplication window)',
    )
    .default(0)
    .describe(
      'how long change events (histories, skill executions) are kept; 0 = for ever. JetStream `max_age` distributed; ' +
        'embedded, the event logs are compacted to it (work-queue logs drop settled jobs, the outbox drops published ' +
        'changes, whatever this says)',
    ),
  ALFRED_DATA_DIR: z
    .string()
    .default('./.alfred/data')
    .describe('embedded data: vectors, event logs, models, workspaces'),
  ALFRED_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino level (`silent` … `trace`)'),
  ALFRED_SUBJECT_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+\.$/, 'a subject prefix is letters, digits, _ or - ending with a dot')
    .optional()
    .describe('prefix for every NATS subject and stream, ending with a dot (isolates deployments sharing a NATS)'),
  ALFRED_BUS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(600_000)
    .default(5000)
    .describe(
      'bus request timeout (504 after it; 503 when no service answers); writes of many memories (`/memories/batch`, ' +
        "`/conversations`) get 60 s, an agent's purge 120 s",
    ),
  ALFRED_HEALTH_PORT: port.optional().describe('per-service `/live`, `/ready` and `/metrics` (distributed mode)'),
  ALFRED_HEALTH_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe(
      'where the health port listens: loopback unless a probe or scraper outside the host needs it ' +
        '(compose: `0.0.0.0`)',
    ),
  ALFRED_SHUTDOWN_DEADLINE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10_000)
    .describe('graceful shutdown deadline: work in flight finishes within it, then the process exits'),
};

/** What either bus takes from the base variables (the embedded bus has no replicas and ignores them). */
export function busSettings(base: {
  ALFRED_STREAM_REPLICAS: number;
  ALFRED_EVENTS_MAX_AGE_DAYS: number;
  ALFRED_BUS_TIMEOUT_MS: number;
}) {
  return {
    replicas: base.ALFRED_STREAM_REPLICAS,
    eventsMaxAgeMs: base.ALFRED_EVENTS_MAX_AGE_DAYS * 86_400_000,
    defaultTimeoutMs: base.ALFRED_BUS_TIMEOUT_MS,
  };
}

/** Variables of services that embed text (memory, skill-registry). */
export const embeddingEnv = {
  ALFRED_EMBEDDER: z
    .enum(['auto', 'onnx', 'openai', 'hash'])
    .default('auto')
    .describe(
      '`auto` (the endpoint if set, else a local ONNX model if present, else lexical hashing), `onnx`, ' +
        '`openai`, `hash`',
    ),
  ALFRED_EMBEDDINGS_MODEL_DIR: z.string().optional().meta({
    description: 'local ONNX sentence-embedding model folder (transformers.js, offline)',
    shownDefault: '`$ALFRED_DATA_DIR/models/<default model>`',
  }),
  ALFRED_EMBEDDINGS_URL: url(/^https?$/)
    .optional()
    .describe('an OpenAI-compatible `/v1/embeddings` endpoint'),
  ALFRED_EMBEDDINGS_MODEL: z
    .string()
    .default('text-embedding-3-small')
    .describe('the model asked of the embeddings endpoint'),
  ALFRED_EMBEDDINGS_API_KEY: z.string().optional().describe("the embeddings endpoint's key (sent as a bearer token)"),
  ALFRED_MODEL_HUB_URL: url(/^https?$/)
    .default('https://huggingface.co')
    .describe('where `alfred models pull` downloads from (a Hugging Face-layout hub or mirror)'),
  QDRANT_URL: url(/^https?$/)
    .optional()
    .describe('Qdrant instead of the embedded LanceDB'),
  QDRANT_API_KEY: z.string().optional().describe("Qdrant's API key"),
  ALFRED_MEMORY_CACHE_MB: z.coerce
    .number()
    .int()
    .min(16)
    .max(1_048_576)
    .optional()
    .meta({
      description:
        "memory the embedded store's in-memory search indexes may hold (agents loaded on first search, the least " +
        'recently searched dropped past it; see **Memory budget**)',
      shownDefault: "a quarter of the process's memory (256-4096)",
    }),
};

/** The parsed embedding variables of a service's config (memory, skill-registry), with its data dir. */
export type EmbeddingConfig = z.output<z.ZodObject<typeof embeddingEnv>> & { ALFRED_DATA_DIR: string };

/** The model used when ALFRED_MODEL is unset (a current id from the SDK's model list); #llm uses it too. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

/** Variables of services that call the model. */
export const llmEnv = {
  ANTHROPIC_API_KEY: z
    .string()
    .optional()
    .describe('Claude for the model-backed capabilities and agent turns (`/health` says whether one is configured)'),
  ANTHROPIC_BASE_URL: url(/^https?$/)
    .optional()
    .describe('another address of the Messages API (a proxy or gateway)'),
  ALFRED_MODEL: z.string().default(DEFAULT_MODEL).describe('the Claude model'),
  ALFRED_MODEL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(60_000)
    .describe("one model call's time limit, per attempt"),
  ALFRED_MODEL_MAX_RETRIES: z.coerce
    .number()
    .int()
    .min(0)
    .max(10)
    .default(3)
    .describe('retries of a model call refused with 408/409/429/5xx or cut off, honouring retry-after'),
  ALFRED_REQUIRE_MODEL: bool
    .default(false)
    .describe(
      '`true`: refuse model work without `ANTHROPIC_API_KEY` (503 MODEL_NOT_CONFIGURED) instead of the ' +
        'deterministic fallbacks',
    ),
};

/** Variables of services that store content (memories, agent files, skills): see #content-safety. */
export const contentSafetyEnv = {
  ALFRED_SECRETS_REDACT_TENANTS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .describe(
      "tenants (comma-separated; `default` is the open loopback API's) whose writes have credentials replaced by " +
        '`[REDACTED:<kind>]` instead of being refused with 422 SECRET_DETECTED',
    ),
};

/** Variables of services that keep session context. */
export const redisEnv = {
  REDIS_URL: url(/^rediss?$/)
    .optional()
    .describe('sessions, jobs and agent files shared by every instance (distributed mode)'),
  ALFRED_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/, 'a Redis prefix is 1-64 letters, digits, :, _ or -')
    .default('alfred:')
    .describe('prefix of every Redis key (one per deployment sharing a Redis)'),
};

export const envHelpers = { bool, port, url };

/** Variables of an agent turn's limits that the gateway needs as well (its credential lives as long as a turn may). */
export const turnEnv = {
  ALFRED_TURN_DEADLINE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(600_000)
    .describe('the longest an agent turn runs before it is stopped (its bash credential lives this and a minute)'),
};

/** Variables of services that run untrusted code (skill-runner: executable skills; agent-runtime: the agent's bash). */
export const osSandboxEnv = {
  ALFRED_OS_SANDBOX: z
    .enum(['required', 'unsafe-off'])
    .default('required')
    .describe(
      "executable skills and the agent's `bash` run only inside bubblewrap (refused, with the fix, where it cannot " +
        'start); `unsafe-off` runs them without the OS layer and logs `UNSAFE` at every start',
    ),
  ALFRED_BWRAP_PATH: z.string().min(1).default('bwrap').describe('the bubblewrap binary'),
};
