import { BotError, GrammyError, HttpError, type Bot } from 'grammy';
import type { Update } from 'grammy/types';
import type { Consuming, JobContext, WorkQueue } from '#bus';
import { PermanentError } from '#bus';
import { isAlfredError } from '#errors';
import type { Logger } from '#logging';
import type { UpdateJob } from '../chat/bot-handlers.js';
import { ChatGate } from '../chat/chat-gate.js';
import { TurnAbandoned } from '../chat/turn-relay.js';
import { UPDATE_RETENTION_MS, type ChannelStore } from '../store/channel.store.js';
import { chatKeyOf } from './chat-ref.js';
import { describeTelegramError, isPermanentTelegramError } from './telegram-client.js';
import { chatOfUpdate } from './update-chat.js';
import type { UpdateJobPayload } from './update-intake.js';

/**
 * Takes stored updates off the queue and hands each to grammY once: an update already handled (its record says
 * `done`) is skipped, updates of one chat are admitted in order, and the job is acknowledged only when the update
 * was handled. The service stopping mid-turn leaves the job for redelivery.
 */
export class UpdateWorker {
  private readonly jobs = new Map<number, UpdateJob>();
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly gate = new ChatGate();
  private consuming?: Consuming;

  constructor(
    private readonly bot: Bot,
    private readonly queue: WorkQueue<typeof UpdateJobPayload>,
    private readonly store: ChannelStore,
    private readonly options: { readonly concurrency: number; readonly token: string },
    private readonly logger: Logger,
  ) {}

  jobOf = (updateId: number): UpdateJob => this.jobs.get(updateId)!;

  async start(): Promise<void> {
    this.consuming = await this.queue.consume((job, ctx) => this.handle(job.update as unknown as Update, ctx), {
      concurrency: this.options.concurrency,
      onDead: (payload, reason) =>
        this.logger.error(
          { update: (payload as { update?: Update }).update?.update_id, reason },
          'a Telegram update could not be handled and was given up',
        ),
    });
  }

  /**
   * Stops taking updates; turns still running after `graceMs` are abandoned and their updates handed back to the queue.
   */
  async stop(graceMs: number): Promise<void> {
    await this.consuming?.stop(graceMs);
  }

  /** A delivery of an update already in hand here (JetStream may redeliver while it runs) waits for that one. */
  private async handle(update: Update, job: JobContext): Promise<void> {
    const running = this.inFlight.get(update.update_id);
    if (running) {
      await running.catch(() => undefined);
      if ((await this.store.getUpdate(update.update_id))?.status !== 'done')
        throw new Error(`update ${update.update_id} is not finished yet`);
      return;
    }
    const run = this.handleOnce(update, job);
    this.inFlight.set(update.update_id, run);
    try {
      await run;
    } finally {
      this.inFlight.delete(update.update_id);
    }
  }

  private async handleOnce(update: Update, job: JobContext): Promise<void> {
    const id = update.update_id;
    const record = await this.store.getUpdate(id);
    if (record?.status === 'done') {
      this.logger.info({ update: id }, 'update already handled; skipping the duplicate');
      return;
    }
    const chat = chatOfUpdate(update);
    const admitted = chat ? await this.gate.admit(chatKeyOf(chat)) : () => undefined;
    this.jobs.set(id, { context: { correlationId: job.correlationId }, signal: job.signal, admitted });
    try {
      await this.bot.handleUpdate(update);
    } catch (err) {
      this.settle(id, err instanceof BotError ? err.error : err);
    } finally {
      this.jobs.delete(id);
      admitted();
    }
    const latest = await this.store.getUpdate(id);
    await this.store.putUpdate(id, { ...latest, status: 'done' }, UPDATE_RETENTION_MS);
  }

  /**
   * Decides a failed update's fate: the service stopping, or a transient failure (a service or Telegram briefly
   * away), is rethrown for another delivery; a refusal ends the update (logged once, here); anything else is a
   * defect, given up at once.
   */
  private settle(id: number, err: unknown): void {
    if (err instanceof TurnAbandoned) throw err;
    const described = isAlfredError(err)
      ? { code: err.code, message: err.message }
      : describeTelegramError(err, this.options.token);
    if (isPermanentTelegramError(err) || (isAlfredError(err) && err.status < 500)) {
      this.logger.warn({ update: id, err: described }, 'update could not be answered');
      return;
    }
    if (isAlfredError(err) || err instanceof HttpError || err instanceof GrammyError) {
      this.logger.warn({ update: id, err: described }, 'update failed; it will be tried again');
      throw err;
    }
    this.logger.error({ update: id, err: described }, 'update handling failed');
    throw new PermanentError(String(described.message ?? 'update handling failed'), { cause: err });
  }
}
