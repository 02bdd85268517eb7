import { z } from 'zod';
import { TelegramUpdate } from '#contracts';
import { queueDef, type Bus, type WorkQueue } from '#bus';

export const UpdateJobPayload = z.object({ bot: z.string(), update: TelegramUpdate });

/**
 * The durable queue of received updates (a JetStream work queue distributed, the in-process fsynced log embedded).
 * Telegram is told an update was received only after it is stored here.
 */
export function updateQueue(bus: Bus, ackWaitMs: number): WorkQueue<typeof UpdateJobPayload> {
  return bus.queue(
    queueDef({
      name: 'channels-telegram-updates',
      stream: 'ALFRED_CHANNELS',
      subject: 'alfred.channels.telegram-update.v1',
      payload: UpdateJobPayload,
      maxDeliver: 8,
      backoffMs: [1_000, 5_000, 15_000, 60_000],
      ackWaitMs,
    }),
  );
}

/** Stores updates: once per update id (a repeated id, e.g. re-sent after a restart, is stored once). */
export class UpdateIntake {
  constructor(
    private readonly queue: WorkQueue<typeof UpdateJobPayload>,
    private readonly bot: string,
  ) {}

  async accept(update: { readonly update_id: number }): Promise<void> {
    await this.queue.enqueue(
      { bot: this.bot, update: update as TelegramUpdate },
      { msgId: `telegram-${this.bot}-${update.update_id}` },
    );
  }
}
