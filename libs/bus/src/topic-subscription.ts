import type { z } from 'zod';
import type { LineLogger } from '#logging';
import type { TopicSubscription } from './bus.js';

/**
 * A topic subscription's buffer: the adapter pushes raw JSON text as it arrives, the reader pulls parsed
 * payloads. Payloads that break the topic's schema are logged and dropped (a listener never sees them).
 */
export class TopicBuffer<P> implements TopicSubscription<P> {
  private readonly items: P[] = [];
  private waiter: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly subject: string,
    private readonly schema: z.ZodType<P>,
    private readonly logger: LineLogger,
    private readonly onClose: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  push(text: string): void {
    if (this.closed) return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.logger.warn({ subject: this.subject }, 'topic message is not JSON; dropped');
      return;
    }
    const parsed = this.schema.safeParse(json);
    if (!parsed.success) {
      this.logger.warn(
        { subject: this.subject, err: parsed.error.message },
        'topic message breaks its schema; dropped',
      );
      return;
    }
    this.items.push(parsed.data);
    this.wake();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    this.wake();
  }

  /** Waits for the next message; undefined once closed and empty, or when `timeoutMs` passes first. */
  async next(timeoutMs?: number): Promise<P | undefined> {
    if (this.items.length === 0 && !this.closed) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        if (timeoutMs !== undefined) timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
      this.waiter = undefined;
    }
    return this.items.shift();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<P> {
    try {
      for (;;) {
        const item = await this.next();
        if (item === undefined) {
          if (this.closed) return;
          continue;
        }
        yield item;
      }
    } finally {
      this.close();
    }
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}
