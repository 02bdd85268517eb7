import type { Api } from 'grammy';
import { sleep } from '#retry';
import { type ChatRef, threadParams } from './chat-ref.js';
import { renderMarkdown, type FormattedText } from './formatted-text.js';
import { sameFormatted, splitFormatted, TELEGRAM_TEXT_LIMIT } from './split.js';

export interface ReplyStreamOptions {
  /** Least time between two edits of the reply (Telegram's flood limits). */
  readonly intervalMs: number;
  /**
   * The first message of a part waits for a first sentence, at most this long after the first text arrived: its
   * text is what the phone's notification shows ("typing…" is shown until then).
   */
  readonly firstMessageMs?: number;
  readonly limit?: number;
  /** Messages of this reply sent before (a turn resumed after a restart edits them instead of sending new ones). */
  readonly messageIds?: readonly number[];
  /** How many of those belong to parts already closed (text before a confirmation), which stay as they are. */
  readonly sealed?: number;
  /** Told each time the reply gets a new message or closes a part, so the caller can record it before going on. */
  readonly onMessage?: (ids: readonly number[], sealed: number) => Promise<void>;
}

/** How often a first message that waits for its sentence looks again. */
const FIRST_POLL_MS = 100;
/** A sentence end (or a line break) counts as a first piece once this many words stand before it. */
const FIRST_PIECE_WORDS = 2;

/**
 * A reply that grows while the agent writes. Its first message is sent once there is a sentence to show (or after
 * `firstMessageMs`), later text edits it at most once per interval (edits in between are folded into the next),
 * and text past Telegram's limit continues in further messages. `seal()` closes the part written so far: what the
 * agent writes next goes into new messages below whatever came in between (a confirmation's buttons). One sync runs
 * at a time; flood-control waits (429) happen inside the API and the text keeps growing.
 */
export class ReplyStream {
  private source = '';
  private readonly ids: number[];
  /** Index in `ids` of the current part's first message. */
  private base: number;
  private shown: Array<FormattedText | undefined> = [];
  private syncing?: Promise<void>;
  private lastSync = 0;
  private dirty = false;
  private forced = false;
  private firstTextAt?: number;
  private failure: unknown;

  constructor(
    private readonly api: Api,
    private readonly chat: ChatRef,
    private readonly options: ReplyStreamOptions,
  ) {
    this.ids = [...(options.messageIds ?? [])];
    this.base = Math.min(options.sealed ?? 0, this.ids.length);
  }

  get messageIds(): readonly number[] {
    return this.ids;
  }

  /** True when the current part has text. */
  get hasText(): boolean {
    return this.source.trim().length > 0;
  }

  append(delta: string): void {
    this.source += delta;
    if (this.firstTextAt === undefined && this.hasText) this.firstTextAt = Date.now();
    this.kick();
  }

  /** Replaces the current part's text (the turn's final message, or the text read back after a restart). */
  replace(text: string): void {
    this.source = text;
    this.firstTextAt ??= Date.now();
    this.kick();
  }

  /** Shows the current part now, as it is, and starts a new part: later text goes into messages of its own. */
  async seal(): Promise<void> {
    await this.flush();
    this.base = this.ids.length;
    this.source = '';
    this.shown = [];
    this.firstTextAt = undefined;
    this.forced = false;
    await this.options.onMessage?.(this.ids, this.base);
  }

  /** Brings the messages to the final text (the last edit also waits out the interval); rethrows a failed send. */
  async finish(text?: string): Promise<void> {
    if (text !== undefined) this.source = text;
    await this.flush();
  }

  private async flush(): Promise<void> {
    this.forced = true;
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
      const hold = this.firstHold();
      if (hold > 0) {
        await sleep(Math.min(hold, FIRST_POLL_MS));
        continue;
      }
      const wait = this.lastSync + this.options.intervalMs - Date.now();
      if (wait > 0) await sleep(wait);
      this.dirty = false;
      await this.sync();
      // Counted from the end of a sync: however slow a call was, the next one waits the full interval.
      this.lastSync = Date.now();
    }
  }

  /** How much longer the part's first message waits for a sentence (0: send now). */
  private firstHold(): number {
    if (this.ids.length > this.base || this.forced || !this.hasText) return 0;
    if (firstPieceEnd(this.source) !== undefined) return 0;
    return Math.max(0, (this.firstTextAt ?? Date.now()) + (this.options.firstMessageMs ?? 0) - Date.now());
  }

  /**
   * The text to show: before the part's first message exists and while not forced, only up to its last full sentence.
   */
  private visible(): string {
    if (this.ids.length > this.base || this.forced) return this.source;
    const end = lastPieceEnd(this.source);
    return end === undefined ? this.source : this.source.slice(0, end);
  }

  private async sync(): Promise<void> {
    const text = this.visible();
    if (text.trim().length === 0) return;
    const pieces = splitFormatted(renderMarkdown(text), this.options.limit ?? TELEGRAM_TEXT_LIMIT);
    for (const [i, piece] of pieces.entries()) {
      if (sameFormatted(this.shown[i], piece)) continue;
      const id = this.ids[this.base + i];
      if (id === undefined) {
        const sent = await this.api.sendMessage(this.chat.chatId, piece.text, {
          entities: piece.entities,
          ...threadParams(this.chat),
        });
        this.ids.push(sent.message_id);
        await this.options.onMessage?.(this.ids, this.base);
      } else {
        await this.api
          .editMessageText(this.chat.chatId, id, piece.text, { entities: piece.entities })
          .catch((err: unknown) => {
            if (!isNotModified(err)) throw err;
          });
      }
      this.shown[i] = piece;
    }
  }
}

/** Ends of sentences (., !, ?, … or : before a space or the end) and line breaks, with enough words before them. */
function pieceEnds(text: string): number[] {
  const ends: number[] = [];
  for (const m of text.matchAll(/[.!?…:](?=\s|$)|\n/g)) {
    const end = m.index + m[0].length;
    if (text.slice(0, end).trim().split(/\s+/).length >= FIRST_PIECE_WORDS) ends.push(end);
  }
  return ends;
}

function firstPieceEnd(text: string): number | undefined {
  return pieceEnds(text)[0];
}

function lastPieceEnd(text: string): number | undefined {
  return pieceEnds(text).at(-1);
}

/** Telegram refuses an edit that changes nothing (a resumed reply may already show the text). */
function isNotModified(err: unknown): boolean {
  return (
    err instanceof Error &&
    /message is not modified/i.test((err as { description?: string }).description ?? err.message)
  );
}
