import { autoRetry } from '@grammyjs/auto-retry';
import { Api, Bot, GrammyError, HttpError } from 'grammy';
import type { TelegramConfig } from './bot-identity.js';

/**
 * The bot for handling updates. Its API retries flood-control answers (429) after Telegram's `retry_after` and
 * transient failures with backoff (grammY's auto-retry), up to the configured longest wait.
 */
export function createBot(config: TelegramConfig): Bot {
  const bot = new Bot(config.TELEGRAM_BOT_TOKEN, { client: { apiRoot: config.TELEGRAM_API_URL } });
  bot.api.config.use(autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: config.ALFRED_TELEGRAM_MAX_RETRY_AFTER_S }));
  return bot;
}

/** A plain API client for getUpdates: the poller does its own backoff and must stay abortable. */
export function createPollingApi(config: TelegramConfig): Api {
  // Telegram holds a long poll for its timeout; the HTTP client must wait a little longer than that.
  return new Api(config.TELEGRAM_BOT_TOKEN, {
    apiRoot: config.TELEGRAM_API_URL,
    timeoutSeconds: config.ALFRED_TELEGRAM_POLL_TIMEOUT_S + 15,
  });
}

/**
 * A Telegram failure as it may be logged: the method, code and description, with the token cut out wherever it appears.
 */
export function describeTelegramError(err: unknown, token: string): Record<string, unknown> {
  const redact = (s: string) => s.split(token).join('<token>').split(encodeURIComponent(token)).join('<token>');
  if (err instanceof GrammyError)
    return { method: err.method, error_code: err.error_code, description: redact(err.description) };
  if (err instanceof HttpError)
    return {
      kind: 'network',
      message: redact(err.message),
      cause: redact(String((err.error as Error | undefined)?.message ?? '')),
    };
  if (err instanceof Error) return { message: redact(err.message), ...(err.stack ? { stack: redact(err.stack) } : {}) };
  return { message: redact(String(err)) };
}

/** Telegram refused for good: a 4xx other than flood control (blocked by the user, chat gone, bad request). */
export function isPermanentTelegramError(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code >= 400 && err.error_code < 500 && err.error_code !== 429;
}
