import { z } from 'zod';
import { TenantId } from './common.js';
import { route, ServiceName } from './route.js';

/** Telegram's own limit on update payloads is far below this; anything larger is not an update. */
export const TELEGRAM_UPDATE_MAX_BYTES = 256 * 1024;

/**
 * A Telegram update as the Bot API sends it. Only `update_id` is read here; the channels service hands the whole
 * object to grammY, which knows its many shapes.
 */
export const TelegramUpdate = z.looseObject({ update_id: z.number().int().min(0) });
export type TelegramUpdate = z.infer<typeof TelegramUpdate>;

/** The header Telegram sends with every webhook call: the secret given to setWebhook. */
export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

export const ChannelRoutes = {
  /**
   * A webhook update forwarded by the gateway (`POST /channels/telegram/{tenant}/webhook`). Answered only once the
   * update is stored on the channels queue, so Telegram keeps retrying until then. The tenant comes from the URL the
   * channels service registered; it must be the bot's configured tenant, and the secret must match.
   */
  telegramWebhook: route(
    ServiceName.Channels,
    'telegram-webhook',
    z.object({ tenant: TenantId, secret_token: z.string().max(256), update: TelegramUpdate }),
    z.object({ queued: z.boolean(), update_id: z.number().int() }),
    { maxRequestBytes: TELEGRAM_UPDATE_MAX_BYTES + 1024 },
  ),
} as const;
