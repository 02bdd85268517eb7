import { randomUUID } from 'node:crypto';
import type { Api } from 'grammy';
import {
  CredentialRoutes,
  ErrorCode,
  TurnRoutes,
  TurnTopics,
  type Scope,
  type SessionMessage,
  type TurnEvent,
} from '#contracts';
import type { Bus, MessageContext, TopicSubscription } from '#bus';
import { AlfredError, isAlfredError } from '#errors';
import type { Logger } from '#logging';
import { followTurn } from '#runtime';
import { UPDATE_RETENTION_MS, type ChannelStore, type UpdateRecord } from '../store/channel.store.js';
import { type ChatRef, threadParams } from '../telegram/chat-ref.js';
import { ReplyStream } from '../telegram/reply-stream.js';
import type { Confirmations } from './confirmations.js';
import type { Conversation, Conversations } from './conversations.js';
import { Typing } from './typing.js';
import { sleep } from '#retry';

/** One chat message that becomes an agent turn. */
export interface TurnRequest {
  readonly updateId: number;
  /** The chat message the turn answers (a queued one is answered as a reply to it). */
  readonly messageId?: number;
  readonly conv: Conversation;
  readonly text: string;
  readonly context: MessageContext;
  /** Aborted when the service stops: the update is left unacknowledged and resumes after the restart. */
  readonly signal: AbortSignal;
  /** Lets the chat's next update in once this turn has started (or was refused). */
  readonly admitted: () => void;
}

/** Thrown when the service stops mid-turn: the queue redelivers the update later. */
export class TurnAbandoned extends Error {
  constructor() {
    super('the service stopped while the turn ran; the update will be handled again');
    this.name = 'TurnAbandoned';
  }
}

export const QUEUED_TEXT = '📥 Got it. I will answer this right after the current reply (/cancel stops that one).';
/** Said when a message waited for the chat's running turn (on another instance) longer than anyone would. */
export const NOT_TAKEN_TEXT =
  '⚠️ This message was not taken: the previous answer is still running after 10 minutes. Send it again ' +
  'later, or /cancel.';
/** The longest a message waits for a turn that another instance runs on its session. */
const QUEUE_WAIT_MS = 10 * 60_000;
const QUEUE_POLL_MS = [250, 500, 1_000, 2_000] as const;

const newTurnId = () => `turn-${randomUUID().replaceAll('-', '')}`;

/**
 * Runs chat messages as agent turns through the turn routes and their event topic, as the gateway's SSE endpoint
 * does, and streams each reply into the chat. One turn per chat at a time: a message that arrives while one runs
 * (or while its reply is being finished) is queued, told so, and answered next. The update record makes a
 * redelivered update resume: a turn that already wrote its result is answered from the session, one still running
 * elsewhere is followed, one that died is run again, and the reply keeps its messages.
 */
export class TurnRelay {
  private readonly active = new Set<string>();
  /** Per chat, the last queued or running message's handling: the next one starts when it ends. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    private readonly bus: Bus,
    private readonly api: Api,
    private readonly store: ChannelStore,
    private readonly conversations: Conversations,
    private readonly confirmations: Confirmations,
    private readonly options: { readonly editIntervalMs: number; readonly firstMessageMs: number },
    private readonly logger: Logger,
  ) {}

  /** True while a turn of this chat runs in this instance (its reply may still be getting its last edit after). */
  isBusy(chatKey: string): boolean {
    return this.active.has(chatKey);
  }

  /** Waits up to `ms` for the chat's running turn to end; true when none runs any more. */
  async idle(chatKey: string, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (this.active.has(chatKey) && Date.now() < deadline) await sleep(Math.min(50, deadline - Date.now()));
    return !this.active.has(chatKey);
  }

  /**
   * Runs the message's turn now, or after the chat's running and queued ones (saying so, and letting the next update
   * in).
   */
  async run(req: TurnRequest): Promise<void> {
    const key = req.conv.key;
    const before = this.tails.get(key);
    const mine = (before ?? Promise.resolve()).catch(() => undefined).then(() => this.runNow(req));
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => this.tails.get(key) === tail && this.tails.delete(key));
    if (before) {
      req.admitted();
      await this.tellQueued(req);
    }
    return mine;
  }

  private async runNow(req: TurnRequest): Promise<void> {
    if (req.signal.aborted) throw new TurnAbandoned();
    const key = req.conv.key;
    this.active.add(key);
    try {
      const record = await this.store.getUpdate(req.updateId);
      const begun = record?.turn_id ? await this.resume(req, record) : await this.begin(req);
      req.admitted();
      if (begun) {
        try {
          await this.follow(req, begun.record, begun.events, begun.attached);
        } finally {
          if (begun.credential)
            this.revoke(this.conversations.scopeOf(begun.record.agent!), begun.credential, req.context);
        }
      }
    } finally {
      this.active.delete(key);
      req.admitted();
    }
  }

  private async begin(req: TurnRequest): Promise<Begun | undefined> {
    const session = await this.conversations.sessionOf(req.conv, req.context);
    const record: UpdateRecord = {
      status: 'running',
      turn_id: newTurnId(),
      agent: req.conv.state.agent,
      session_id: session.id,
      version_before: session.version,
      reply_message_ids: [],
    };
    await this.save(req, record);
    return this.start(req, record);
  }

  /** A redelivered update whose turn began before: answer, follow or rerun it, as its session shows. */
  private async resume(req: TurnRequest, record: UpdateRecord): Promise<Begun | undefined> {
    const scope = this.conversations.scopeOf(record.agent!);
    const session = await this.conversations.find(scope, record.session_id!, req.context);
    if (!session) return undefined;
    if (session.version > record.version_before!) {
      this.logger.info(
        { update: req.updateId, turn: record.turn_id },
        'resumed update: its turn had finished; answering from the session',
      );
      await this.reply(req, record).finish(lastAssistantText(session.messages));
      return undefined;
    }
    return this.start(req, { ...record, turn_id: newTurnId() }, record.turn_id);
  }

  /**
   * Starts the turn (listening first: its first event may beat the reply); a turn still running under `earlier` is
   * followed instead. A turn of another update holding the session (run by another instance) is waited for.
   */
  private async start(req: TurnRequest, record: UpdateRecord, earlier?: string): Promise<Begun | undefined> {
    const deadline = Date.now() + QUEUE_WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      const begun = await this.startOnce(req, record, earlier, Date.now() < deadline);
      if (begun !== 'busy') return begun;
      if (attempt === 0) await this.tellQueued(req);
      await sleep(QUEUE_POLL_MS[Math.min(attempt, QUEUE_POLL_MS.length - 1)]!, req.signal);
      if (req.signal.aborted) throw new TurnAbandoned();
    }
  }

  private async startOnce(
    req: TurnRequest,
    record: UpdateRecord,
    earlier: string | undefined,
    mayWait: boolean,
  ): Promise<Begun | undefined | 'busy'> {
    const scope: Scope = this.conversations.scopeOf(record.agent!);
    const events = await this.bus.listen(TurnTopics.events, { key: record.turn_id! });
    let credential: string | undefined;
    try {
      // The agent's bash reaches the API with a credential of this turn's scope, as it does for turns started over
      // HTTP.
      ({ credential } = await this.bus.request(
        CredentialRoutes.mint,
        { scope, session_id: record.session_id!, turn_id: record.turn_id! },
        { context: req.context },
      ));
      await this.bus.request(
        TurnRoutes.start,
        { scope, session_id: record.session_id!, turn_id: record.turn_id!, message: req.text, credential },
        { context: req.context },
      );
    } catch (err) {
      events.close();
      if (credential) this.revoke(scope, credential, req.context);
      const running = conflictTurn(err);
      if (running !== undefined && running === earlier) {
        this.logger.info({ update: req.updateId, turn: earlier }, 'resumed update: its turn still runs; following it');
        return {
          record: { ...record, turn_id: earlier },
          events: await this.bus.listen(TurnTopics.events, { key: earlier }),
          attached: true,
        };
      }
      if (running !== undefined && earlier !== undefined) throw err; // another turn holds the session: try again later
      if (running !== undefined && mayWait) return 'busy';
      if (!isAlfredError(err) || (err.status >= 500 && err.code !== ErrorCode.ModelNotConfigured)) throw err;
      await this.refuse(req, running !== undefined ? NOT_TAKEN_TEXT : `⚠️ ${err.message}`, record);
      return undefined;
    }
    await this.save(req, record);
    return { record, events, attached: false, credential };
  }

  private async follow(
    req: TurnRequest,
    record: UpdateRecord,
    events: Begun['events'],
    attached: boolean,
  ): Promise<void> {
    const reply = this.reply(req, record);
    const typing = new Typing(this.api, req.conv.chat).start();
    const stream = followTurn(events, record.turn_id!);
    const abandon = () => events.close();
    req.signal.addEventListener('abort', abandon, { once: true });
    let final: string | undefined;
    let failure: { code: string; message: string } | undefined;
    let newRound = false;
    const asked: Array<Awaited<ReturnType<Confirmations['ask']>>> = [];
    try {
      for await (const e of stream) {
        if (req.signal.aborted) break;
        if (e.type === 'text_delta') {
          reply.append(newRound && reply.hasText ? `\n\n${e.text}` : e.text);
          newRound = false;
        } else if (e.type === 'tool_call') newRound = true;
        else if (e.type === 'message') final = e.text;
        else if (e.type === 'confirmation_request') {
          // What the agent wrote so far stays above the buttons; what it writes after goes below them.
          await reply.seal();
          newRound = false;
          asked.push(await this.confirmations.ask(req.conv, record, e));
        } else if (e.type === 'error') failure = e.error;
      }
    } finally {
      typing.stop();
      req.signal.removeEventListener('abort', abandon);
      // The turn is over: commands that wait for it (/new, /compact) may go on while the reply gets its last edit.
      this.active.delete(req.conv.key);
    }
    if (req.signal.aborted) throw new TurnAbandoned();
    await this.confirmations.expire(req.conv, asked);
    // A follower that joined late missed the streamed text: the final message has all of it.
    if (attached && final !== undefined) reply.replace(final);
    if (failure) reply.append(`${reply.hasText ? '\n\n' : ''}⚠️ ${failure.message}`);
    else if (!reply.hasText) reply.append(final || '(no reply)');
    await reply.finish();
  }

  private reply(req: TurnRequest, record: UpdateRecord): ReplyStream {
    return new ReplyStream(this.api, req.conv.chat, {
      intervalMs: this.options.editIntervalMs,
      firstMessageMs: this.options.firstMessageMs,
      messageIds: record.reply_message_ids,
      sealed: record.reply_sealed,
      onMessage: (ids, sealed) => this.save(req, { ...record, reply_message_ids: ids, reply_sealed: sealed }),
    });
  }

  /** Tells the sender their message waits for the answer being written (as a reply to it, so it is clear which). */
  private async tellQueued(req: TurnRequest): Promise<void> {
    const quote =
      req.messageId === undefined
        ? {}
        : { reply_parameters: { message_id: req.messageId, allow_sending_without_reply: true } };
    await this.api
      .sendMessage(req.conv.chat.chatId, QUEUED_TEXT, { ...threadParams(req.conv.chat), ...quote })
      .catch((err: unknown) => this.logger.warn({ err }, 'could not say that a message was queued'));
  }

  private async refuse(req: TurnRequest, text: string, record?: UpdateRecord): Promise<void> {
    req.admitted();
    await sendText(this.api, req.conv.chat, text);
    if (record) await this.save(req, { ...record, status: 'done' });
  }

  /** Ends the turn's credential early (it expires after the TTL regardless), without failing the turn's delivery. */
  private revoke(scope: Scope, credential: string, context: MessageContext): void {
    this.bus
      .request(CredentialRoutes.revoke, { scope, credential }, { context })
      .catch((err: unknown) =>
        this.logger.warn({ err }, 'could not revoke a turn credential; it expires after its TTL'),
      );
  }

  private save(req: TurnRequest, record: UpdateRecord): Promise<void> {
    return this.store.putUpdate(req.updateId, record, UPDATE_RETENTION_MS);
  }
}

interface Begun {
  readonly record: UpdateRecord;
  readonly events: TopicSubscription<TurnEvent>;
  readonly attached: boolean;
  /** The scoped credential minted for a turn this relay started (none when it follows an earlier turn). */
  readonly credential?: string;
}

/** The turn that holds the session, when a start was refused because one runs. */
function conflictTurn(err: unknown): string | undefined {
  if (!(err instanceof AlfredError) || err.code !== ErrorCode.Conflict) return undefined;
  const details = err.details as { turn_id?: unknown } | undefined;
  return typeof details?.turn_id === 'string' ? details.turn_id : '';
}

/** The text of the session's last assistant message (what a finished turn answered). */
export function lastAssistantText(messages: readonly SessionMessage[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'assistant');
  if (!last) return '(no reply)';
  if (typeof last.content === 'string') return last.content;
  return last.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n') || '(no reply)';
}

export function sendText(api: Api, chat: ChatRef, text: string) {
  return api.sendMessage(chat.chatId, text, threadParams(chat));
}
