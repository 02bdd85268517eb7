import { z } from 'zod';
import { AgentName, DEFAULT_AGENT_NAME, TenantId } from '#contracts';
import { baseEnv, envHelpers, parseEnv, redisEnv } from '#config';

const int = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** A Telegram user id (a positive integer below 2^53). */
const UserId = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * `agent:id,id;agent2:id`: which Telegram users may talk to which agent. Nobody is allowed by default: strangers
 * get only their own id back, so an operator can add them.
 */
const allowList = z.string().transform((raw, ctx) => {
  const allow = new Map<string, Set<number>>();
  for (const entry of raw
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [agent = '', ids = ''] = entry.split(':').map((s) => s.trim());
    const name = AgentName.safeParse(agent);
    const parsed = ids
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => UserId.safeParse(s));
    if (!name.success || parsed.length === 0 || parsed.some((p) => !p.success)) {
      ctx.addIssue({
        code: 'custom',
        message: `"${entry}" is not agent:user_id,user_id (e.g. alfred:123456789,987654321)`,
      });
      return z.NEVER;
    }
    const set = allow.get(name.data) ?? new Set<number>();
    for (const p of parsed) set.add(p.data!);
    allow.set(name.data, set);
  }
  return allow;
});

/** Variables of the channels service (besides the base and Redis ones). */
export const channelsEnv = {
  TELEGRAM_BOT_TOKEN: z
    .string()
    .regex(/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/, 'a bot token looks like 123456789:AA… (as @BotFather gives it)')
    .optional()
    .describe(
      'the bot token from @BotFather: the Telegram channel is off without it (never logged) — see ' +
        '`services/channels/README.md`',
    ),
  TELEGRAM_API_URL: envHelpers
    .url(/^https?$/)
    .default('https://api.telegram.org')
    .describe("the Bot API server (a local Bot API server instead of Telegram's)"),
  ALFRED_TELEGRAM_ALLOW: allowList
    .optional()
    .describe(
      '`agent:id,id;agent2:id`: which Telegram users may talk to which agent (nobody by default: strangers ' +
        'get their id to add)',
    ),
  ALFRED_TELEGRAM_DEFAULT_AGENT: AgentName.default(DEFAULT_AGENT_NAME).describe(
    'the agent a new chat talks to (a user allowed only for other agents starts with the first of those)',
  ),
  ALFRED_TELEGRAM_TENANT: TenantId.default('default').describe('the tenant every chat of this bot belongs to'),
  ALFRED_TELEGRAM_WEBHOOK_URL: z
    .string()
    .refine(
      (v) => /^https:\/\//i.test(v),
      'Telegram delivers webhooks to https:// URLs only; put Alfred behind a TLS proxy (or unset it to long-poll)',
    )
    .pipe(envHelpers.url(/^https$/))
    .optional()
    .describe(
      "the gateway's public https base URL: set, Telegram delivers updates by webhook to " +
        '`<url>/channels/telegram/<tenant>/webhook`; unset, the service long-polls',
    ),
  ALFRED_TELEGRAM_POLL_TIMEOUT_S: int(0, 50, 25).describe('long-poll wait of one getUpdates call, in seconds'),
  ALFRED_TELEGRAM_EDIT_INTERVAL_MS: int(100, 60_000, 1_200).describe(
    'least time between two edits of a streaming reply (Telegram allows about one message per second per chat)',
  ),
  ALFRED_TELEGRAM_FIRST_MESSAGE_MS: int(0, 30_000, 2_000).describe(
    'the longest a reply\'s first message waits for its first sentence ("typing…" shows meanwhile): the phone\'s ' +
      'notification shows that message',
  ),
  ALFRED_TELEGRAM_MAX_RETRY_AFTER_S: int(1, 3_600, 120).describe(
    'the longest flood-control wait (429 retry_after) one call sits out before it fails',
  ),
  ALFRED_CHANNELS_CONCURRENCY: int(2, 1_000, 32).describe(
    'updates handled at once (a turn holds its update until the reply is out)',
  ),
  ALFRED_CHANNELS_ACK_WAIT_MS: int(1_000, 600_000, 30_000).describe(
    "how long a stored update may go unacknowledged before another instance takes it over (a crashed one's)",
  ),
};

export const channelsEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...channelsEnv });
export type ChannelsConfig = z.output<typeof channelsEnvSchema>;

export function loadChannelsConfig(env: NodeJS.ProcessEnv): ChannelsConfig {
  return parseEnv(channelsEnvSchema, env);
}
