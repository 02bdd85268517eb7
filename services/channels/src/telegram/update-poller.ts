import { randomUUID } from 'node:crypto';
import { GrammyError, type Api } from 'grammy';
import type { Logger } from '#logging';
import { Backoff, sleep } from '#retry';
import type { ChannelStore } from '../store/channel.store.js';
import { describeTelegramError } from './telegram-client.js';
import { ALLOWED_UPDATES } from './update-chat.js';
import type { UpdateIntake } from './update-intake.js';

export interface PollerOptions {
  readonly timeoutS: number;
  readonly token: string;
}

/**
 * Long polling done so no update is lost: each batch is stored on the durable queue first, and only then
 * confirmed to Telegram (by asking for the next offset). A batch that could not be stored is fetched again.
 * One poller per bot at a time (Telegram allows one getUpdates at once): instances take turns through a lease.
 */
export class UpdatePoller {
  private readonly owner = randomUUID();
  private readonly stopping = new AbortController();
  private loop?: Promise<void>;
  private offset?: number;
  private failures = 0;
  /** Waits after a failed poll: 0.5 s doubling to 30 s, jittered, unless Telegram names one. */
  private readonly backoff = new Backoff({ baseMs: 500, maxMs: 30_000 });

  constructor(
    private readonly api: Api,
    private readonly intake: UpdateIntake,
    private readonly store: ChannelStore,
    private readonly options: PollerOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  /** Stops polling and confirms what was stored, so a restart is not sent it again. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    if (this.offset !== undefined) {
      const signal = AbortSignal.timeout(2_000) as unknown as Parameters<Api['getUpdates']>[1];
      await this.api.getUpdates({ offset: this.offset, limit: 1, timeout: 0 }, signal).catch(() => undefined);
    }
    await this.store.releasePoller(this.owner).catch(() => undefined);
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        // Renewed before every poll; a crashed poller's lease lapses one poll timeout (plus margin) later.
        const leaseMs = (this.options.timeoutS + 10) * 1_000;
        if (!(await this.store.holdPoller(this.owner, leaseMs))) {
          await sleep(leaseMs / 4, signal);
          continue;
        }
        await this.pollOnce(signal);
        this.failures = 0;
        this.backoff.reset();
      } catch (err) {
        if (signal.aborted) return;
        this.failures += 1;
        this.logger.warn(
          { err: describeTelegramError(err, this.options.token), failures: this.failures },
          conflictHint(err),
        );
        await sleep(retryAfterMs(err) ?? this.backoff.next(), signal);
      }
    }
  }

  private async pollOnce(signal: AbortSignal): Promise<void> {
    const params = {
      timeout: this.options.timeoutS,
      allowed_updates: [...ALLOWED_UPDATES],
      ...(this.offset === undefined ? {} : { offset: this.offset }),
    };
    // grammY types its signal with its polyfill's class; node-fetch takes the platform's AbortSignal as well.
    const updates = await this.api.getUpdates(params, signal as unknown as Parameters<Api['getUpdates']>[1]);
    for (const update of updates) {
      await this.intake.accept(update);
      this.offset = update.update_id + 1;
    }
  }
}

/** The wait Telegram asked for (flood control's retry_after), or undefined. */
function retryAfterMs(err: unknown): number | undefined {
  const retryAfter = err instanceof GrammyError ? err.parameters.retry_after : undefined;
  return retryAfter === undefined ? undefined : retryAfter * 1_000;
}

function conflictHint(err: unknown): string {
  if (err instanceof GrammyError && err.error_code === 409)
    return 'getUpdates conflicts with another poller or a webhook; retrying';
  if (err instanceof GrammyError && err.error_code === 401)
    return 'Telegram refused the bot token (check TELEGRAM_BOT_TOKEN); retrying';
  return 'polling Telegram failed; retrying';
}
