import { createHash } from 'node:crypto';
import type { ChannelsConfig } from '../config.js';

/** Enabled Telegram settings: present only when a token is configured. */
export type TelegramConfig = ChannelsConfig & { TELEGRAM_BOT_TOKEN: string };

/** The bot's numeric id: the part of the token before the colon (public: it is the bot's user id). */
export function botIdOf(token: string): string {
  return token.slice(0, token.indexOf(':'));
}

/** The webhook secret Telegram echoes in X-Telegram-Bot-Api-Secret-Token: derived from the token, never the token. */
export function webhookSecretOf(token: string): string {
  return createHash('sha256').update(`alfred-telegram-webhook:${token}`).digest('hex');
}
