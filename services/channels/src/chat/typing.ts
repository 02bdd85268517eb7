import type { Api } from 'grammy';
import { type ChatRef, threadParams } from '../telegram/chat-ref.js';

/** Telegram shows "typing…" for about five seconds per chat action. */
const TYPING_EVERY_MS = 4_000;

/** Keeps "typing…" visible while a turn runs; failures only cost the indicator. */
export class Typing {
  private timer?: NodeJS.Timeout;
  private inFlight = false;

  constructor(
    private readonly api: Api,
    private readonly chat: ChatRef,
  ) {}

  start(): this {
    this.beat();
    this.timer = setInterval(() => this.beat(), TYPING_EVERY_MS);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private beat(): void {
    if (this.inFlight) return;
    this.inFlight = true;
    this.api
      .sendChatAction(this.chat.chatId, 'typing', threadParams(this.chat))
      .catch(() => undefined)
      .finally(() => (this.inFlight = false));
  }
}
