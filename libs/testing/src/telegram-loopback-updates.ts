import type { IncomingMessage } from 'node:http';
import { Agent, fetch as undiciFetch } from 'undici';
import { badRequest, BotApiFailure } from './telegram-loopback-wire.js';

interface Pending {
  readonly update_id: number;
  readonly body: Record<string, unknown>;
}

interface Waiter {
  readonly wake: (conflict: boolean) => void;
}

const SECRET_HEADER = 'X-Telegram-Bot-Api-Secret-Token';

/**
 * The bot's incoming updates as Telegram keeps them: unconfirmed ones are served again until a getUpdates with a
 * higher offset confirms them; one long poll at a time; with a webhook set, they are POSTed to it instead and
 * retried until it answers 2xx.
 */
export class TelegramUpdates {
  /** How many times each update was handed out (getUpdates answers and webhook attempts that got a 2xx). */
  readonly served = new Map<number, number>();
  /** Update ids confirmed by the bot, in order. */
  readonly confirmed: number[] = [];
  /** Webhook calls made: the update id, the answer's status. */
  readonly webhookCalls: Array<{ update_id: number; status: number; secret: string | undefined }> = [];
  private pending: Pending[] = [];
  private nextId = 100_000 + Math.floor(Math.random() * 1_000);
  private waiter?: Waiter;
  private webhook?: { url: string; secret?: string };
  private pushing = false;
  private closed = false;
  /** Webhook calls trust this certificate (and the system's), as Telegram trusts one uploaded with setWebhook. */
  private readonly tls?: Agent;

  constructor(webhookCa?: string) {
    if (webhookCa) this.tls = new Agent({ connect: { ca: webhookCa } });
  }

  push(body: Record<string, unknown>): number {
    const update_id = this.nextId++;
    this.pending.push({ update_id, body });
    this.waiter?.wake(false);
    void this.deliver();
    return update_id;
  }

  /** Updates not yet confirmed. */
  get unconfirmed(): number[] {
    return this.pending.map((p) => p.update_id);
  }

  async poll(p: Record<string, unknown>, req: IncomingMessage): Promise<unknown[]> {
    if (this.webhook)
      throw new BotApiFailure({
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the " +
          'webhook first',
      });
    const offset = typeof p.offset === 'number' ? p.offset : undefined;
    if (offset !== undefined && offset > 0) this.confirmBelow(offset);
    const limit = typeof p.limit === 'number' ? Math.min(Math.max(p.limit, 1), 100) : 100;
    const timeoutS = typeof p.timeout === 'number' ? p.timeout : 0;
    this.waiter?.wake(true);
    if (this.pending.length === 0 && timeoutS > 0) {
      const conflict = await this.wait(timeoutS * 1000, req);
      if (conflict)
        throw new BotApiFailure({
          error_code: 409,
          description:
            'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
        });
    }
    const batch = this.pending.slice(0, limit);
    for (const u of batch) this.served.set(u.update_id, (this.served.get(u.update_id) ?? 0) + 1);
    return batch.map((u) => ({ update_id: u.update_id, ...u.body }));
  }

  setWebhook(p: Record<string, unknown>): true {
    if (typeof p.url !== 'string' || !/^https:\/\//.test(p.url))
      throw badRequest('bad webhook: An HTTPS URL must be provided for webhook');
    if (
      p.secret_token !== undefined &&
      (typeof p.secret_token !== 'string' || !/^[A-Za-z0-9_-]{1,256}$/.test(p.secret_token))
    )
      throw badRequest('secret token contains unallowed characters');
    if (p.drop_pending_updates === true) this.pending = [];
    this.webhook = { url: p.url, ...(typeof p.secret_token === 'string' ? { secret: p.secret_token } : {}) };
    this.waiter?.wake(true);
    void this.deliver();
    return true;
  }

  deleteWebhook(p: Record<string, unknown>): true {
    if (p.drop_pending_updates === true) this.pending = [];
    this.webhook = undefined;
    return true;
  }

  webhookInfo(): Record<string, unknown> {
    return { url: this.webhook?.url ?? '', has_custom_certificate: false, pending_update_count: this.pending.length };
  }

  close(): void {
    this.closed = true;
    this.waiter?.wake(true);
    void this.tls?.close();
  }

  private confirmBelow(offset: number): void {
    const gone = this.pending.filter((u) => u.update_id < offset);
    this.confirmed.push(...gone.map((u) => u.update_id));
    this.pending = this.pending.filter((u) => u.update_id >= offset);
  }

  private wait(ms: number, req: IncomingMessage): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (conflict: boolean) => {
        clearTimeout(timer);
        req.socket.off('close', onClose);
        if (this.waiter === waiter) this.waiter = undefined;
        resolve(conflict);
      };
      const onClose = () => finish(false);
      const timer = setTimeout(() => finish(false), ms);
      const waiter: Waiter = { wake: finish };
      this.waiter = waiter;
      req.socket.once('close', onClose);
    });
  }

  /** Posts pending updates to the webhook one at a time, retrying each until it is answered with a 2xx. */
  private async deliver(): Promise<void> {
    if (this.pushing) return;
    this.pushing = true;
    try {
      while (this.webhook && !this.closed && this.pending.length > 0) {
        const next = this.pending[0]!;
        const { url, secret } = this.webhook;
        let status = 0;
        try {
          const res = await undiciFetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(secret ? { [SECRET_HEADER]: secret } : {}) },
            body: JSON.stringify({ update_id: next.update_id, ...next.body }),
            ...(this.tls ? { dispatcher: this.tls } : {}),
          });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          status = 0;
        }
        this.webhookCalls.push({ update_id: next.update_id, status, secret });
        if (status >= 200 && status < 300) {
          this.served.set(next.update_id, (this.served.get(next.update_id) ?? 0) + 1);
          this.confirmed.push(next.update_id);
          this.pending = this.pending.filter((u) => u !== next);
        } else {
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    } finally {
      this.pushing = false;
    }
  }
}
