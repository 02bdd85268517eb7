/** The Telegram channel, or undefined when no bot token is configured. */
export const TELEGRAM_CHANNEL = Symbol('TELEGRAM_CHANNEL');
export const CHANNEL_STORE = Symbol('CHANNEL_STORE');
