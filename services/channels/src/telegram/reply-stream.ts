import type { Api } from 'grammy';
import { sleep } from '../sleep.js';
import { type ChatRef, threadParams } from './chat-ref.js';
import { renderMarkdown, type FormattedText } from './formatted-text.js';
import { sameFormatted, splitFormatted, TELEGRAM_TEXT_LIMIT } from './split.js';

export interface ReplyStreamOptions {
  /** Least time between two edits of the reply (Telegram's flood limits). */
  readonly intervalMs: number;
  readonly limit?: number;
  /** Messages of this reply sent before (a turn resumed after a restart edits them instead of sending new ones). */
  readonly messageIds?: readonly number[];
  /** Told each time the reply gets a new message, so the caller can record it before going on. */
  readonly onMessage?: (ids: readonly number[]) => Promise<void>;
}

/**
 * A reply that grows while the agent writes: the first text is sent as a message, later text edits it at most once
 * per interval (edits in between are folded into the next), and text past Telegram's limit continues in further
 * messages. One sync runs at a time; flood-control waits (429) happen inside the API and the text keeps growing.
 */
export class ReplyStream {
  private source = '';
  private readonly ids: number[];
  private readonly shown: Array<FormattedText | undefined> = [];
  private syncing?: Promise<void>;
  private lastSync = 0;
  private dirty = false;
  private failure: unknown;

  constructor(
    private readonly api: Api,
    private readonly chat: ChatRef,
    private readonly options: ReplyStreamOptions,
  ) {
    this.ids = [...(options.messageIds ?? [])];
  }

  get messageIds(): readonly number[] {
    return this.ids;
  }

  get hasText(): boolean {
    return this.source.trim().length > 0;
  }

  append(delta: string): void {
    this.source += delta;
    this.kick();
  }

  /** Replaces the whole text (the turn's final message, or the text read back after a restart). */
  replace(text: string): void {
    this.source = text;
    this.kick();
  }

  /** Brings the messages to the final text (the last edit also waits out the interval); rethrows a failed send. */
  async finish(text?: string): Promise<void> {
    if (text !== undefined) this.source = text;
    this.kick();
    while (this.syncing) await this.syncing;
    if (this.failure !== undefined) throw this.failure;
  }

  private kick(): void {
    this.dirty = true;
    if (this.syncing || this.failure !== undefined) return;
    this.syncing = this.run()
      .catch((err: unknown) => {
        this.failure = err;
      })
      .finally(() => (this.syncing = undefined));
  }

  private async run(): Promise<void> {
    while (this.dirty) {
      const wait = this.lastSync + this.options.intervalMs - Date.now();
      if (wait > 0) await sleep(wait);
      this.dirty = false;
      await this.sync();
      // Counted from the end of a sync: however slow a call was, the next one waits the full interval.
      this.lastSync = Date.now();
    }
  }

  private async sync(): Promise<void> {
    if (this.source.trim().length === 0) return;
    const pieces = splitFormatted(renderMarkdown(this.source), this.options.limit ?? TELEGRAM_TEXT_LIMIT);
    for (const [i, piece] of pieces.entries()) {
      if (sameFormatted(this.shown[i], piece)) continue;
      const id = this.ids[i];
      if (id === undefined) {
        const sent = await this.api.sendMessage(this.chat.chatId, piece.text, { entities: piece.entities, ...threadParams(this.chat) });
        this.ids.push(sent.message_id);
        await this.options.onMessage?.(this.ids);
      } else {
        await this.api.editMessageText(this.chat.chatId, id, piece.text, { entities: piece.entities }).catch((err: unknown) => {
          if (!isNotModified(err)) throw err;
        });
      }
      this.shown[i] = piece;
    }
  }
}

/** Telegram refuses an edit that changes nothing (a resumed reply may already show the text). */
function isNotModified(err: unknown): boolean {
  return err instanceof Error && /message is not modified/i.test((err as { description?: string }).description ?? err.message);
}
