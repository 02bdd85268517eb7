import { z } from 'zod';
import { baseEnv, ConfigError, envHelpers, parseEnv, turnEnv } from '#config';

/** The placeholder .env.example ships with: refused, so a copied example never starts with a published key. */
const PLACEHOLDER = /change-?me/i;

/** `key=tenant` pairs separated by commas; a bare key belongs to the tenant `default`. */
const apiKeys = z.string().transform((raw, ctx) => {
  const keys = new Map<string, string>();
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [key, tenant = 'default'] = entry.split('=').map((s) => s.trim());
    if (!key || key.length < 16) {
      ctx.addIssue({ code: 'custom', message: 'each API key must be at least 16 characters' });
      return z.NEVER;
    }
    if (PLACEHOLDER.test(key)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a key is still the placeholder from .env.example; set a random one (e.g. `openssl rand -hex 32`)',
      });
      return z.NEVER;
    }
    keys.set(key, tenant);
  }
  return keys;
});

export const gatewayEnvSchema = z.object({
  ...baseEnv,
  ...turnEnv,
  ALFRED_API_HOST: z
    .string()
    .default('127.0.0.1')
    .describe('gateway bind address; anything but loopback requires `ALFRED_API_KEYS`'),
  ALFRED_API_PORT: envHelpers.port
    .default(8080)
    .describe("gateway port (agents' skills reach it here unless `ALFRED_API_URL` says)"),
  ALFRED_API_KEYS: apiKeys
    .optional()
    .describe('`key=tenant,key2=tenant2` (a bare key belongs to tenant `default`; keys ≥ 16 chars)'),
  ALFRED_CREDENTIAL_SECRET: z
    .string()
    .min(32, 'ALFRED_CREDENTIAL_SECRET must be at least 32 characters')
    .optional()
    .meta({
      description:
        "signs the short-lived credential each agent turn's `bash` gets (tenant, agent, session; it lives the " +
        "turn's deadline and a minute, and is revoked at every end of its turn and when its session or agent is " +
        'deleted, on every gateway); give every gateway replica the same secret',
      shownDefault: 'random per process',
    }),
  ALFRED_CONSOLE_DIR: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "the web console's built files, served at `/console`", shownDefault: '`dist/console`' }),
  ALFRED_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024)
    .describe('largest request body (413 above)'),
  ALFRED_BODY_DISCARD_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(1024 * 1024 * 1024)
    .default(64 * 1024 * 1024)
    .describe(
      'how much of a body over the limit is read and discarded after its 413 so the client can read it ' +
        '(past it, the connection is closed)',
    ),
  ALFRED_HEALTH_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(1000)
    .describe("how long `/health` and `/health/ready` wait for each service's answer before counting it `down`"),
  ALFRED_METRICS_HISTORY_STEP_S: z.coerce
    .number()
    .int()
    .min(1)
    .max(300)
    .default(10)
    .describe("one point of `GET /metrics/history` (the console's last-hour chart) per this many seconds"),
});
export type GatewayConfig = z.output<typeof gatewayEnvSchema>;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Parses the gateway's environment; off loopback, API keys are mandatory. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const config = parseEnv(gatewayEnvSchema, env);
  if (!LOOPBACK.test(config.ALFRED_API_HOST) && !config.ALFRED_API_KEYS?.size) {
    throw new ConfigError([
      `ALFRED_API_KEYS: required when ALFRED_API_HOST (${config.ALFRED_API_HOST}) is not a loopback address; ` +
        'set ALFRED_API_KEYS=key=tenant,... or bind to 127.0.0.1',
    ]);
  }
  return config;
}

/** How long a scoped credential lives at most: its turn's deadline and a minute (revoked when the turn ends). */
export function credentialTtlMsOf(config: GatewayConfig): number {
  return config.ALFRED_TURN_DEADLINE_MS + 60_000;
}
