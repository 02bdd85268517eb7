/** The Telegram channel, or undefined when no bot token is configured. */
export const TELEGRAM_CHANNEL = Symbol('TELEGRAM_CHANNEL');
export const CHANNEL_STORE = Symbol('CHANNEL_STORE');
/** The tenant every chat of the bot belongs to. */
export const CHANNELS_TENANT = Symbol('CHANNELS_TENANT');
/** How long a stopping service lets running turns finish before leaving them to redelivery. */
export const CHANNELS_GRACE_MS = Symbol('CHANNELS_GRACE_MS');
