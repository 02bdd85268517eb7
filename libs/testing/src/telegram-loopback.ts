import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollUntil } from './poll.js';
import {
  badRequest,
  BotApiFailure,
  checkMarkup,
  checkText,
  readParams,
  sendAnswer,
  sendError,
  type BotApiError,
} from './telegram-loopback-wire.js';
import { TelegramUpdates } from './telegram-loopback-updates.js';

export type { BotApiError } from './telegram-loopback-wire.js';

export interface TelegramUser {
  readonly id: number;
  readonly is_bot: boolean;
  readonly first_name: string;
  readonly username?: string;
}

/** A message as the loopback keeps it: what Telegram would show, plus every edit the bot made. */
export interface LoopbackMessage {
  readonly message_id: number;
  readonly chat: { readonly id: number; readonly type: string };
  readonly from: TelegramUser;
  readonly date: number;
  text: string;
  entities?: unknown[];
  reply_markup?: unknown;
  readonly message_thread_id?: number;
  readonly is_topic_message?: boolean;
  /** The message it answers (the bot's reply_parameters). */
  readonly reply_to_message_id?: number;
  /** The texts this message had, first to last (the sent text first). */
  readonly versions: Array<{ readonly text: string; readonly entities?: unknown[]; readonly at: number }>;
}

/** One Bot API call as it arrived. */
export interface RecordedCall {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly at: number;
  readonly status: number;
}

type Handler = (params: Record<string, unknown>, req: IncomingMessage) => unknown;

export interface TelegramLoopbackOptions {
  /**
   * The certificate (PEM) webhook calls trust, as Telegram trusts one uploaded with setWebhook: a test's TLS proxy
   * on loopback has a self-signed one. Webhooks go to https:// URLs only, as Telegram's do.
   */
  readonly webhookCa?: string;
}

/**
 * A loopback stand-in of the Telegram Bot API, speaking its wire format: `POST /bot<token>/<method>` with JSON,
 * urlencoded or multipart parameters, answers `{ok:true,result}` or `{ok:false,error_code,description,parameters}`
 * with the same HTTP status, getUpdates long polling with offset confirmation (and 409 for a second poller or an
 * active webhook), webhook delivery with the secret header. Drive it with the real grammY; play users with
 * `sendText` and `tap`.
 */
export class TelegramLoopback {
  readonly token: string;
  readonly botUser: TelegramUser;
  readonly calls: RecordedCall[] = [];
  readonly updates: TelegramUpdates;
  private readonly chats = new Map<number, LoopbackMessage[]>();
  private readonly faults: Array<{ method: string; answer: BotApiError; chatId?: number }> = [];
  private readonly handlers: Record<string, Handler>;
  private callbackSeq = 0;

  /** The bot's command menu as the last setMyCommands set it. */
  myCommands: Array<{ command: string; description: string }> = [];

  private constructor(
    private readonly server: Server,
    options: TelegramLoopbackOptions,
  ) {
    const botId = 7_000_000_000 + Math.floor(Math.random() * 1_000_000);
    this.token = `${botId}:${randomBytes(24).toString('base64url')}`;
    this.botUser = { id: botId, is_bot: true, first_name: 'Alfred Loopback', username: 'alfred_loopback_bot' };
    this.updates = new TelegramUpdates(options.webhookCa);
    this.handlers = this.methods();
  }

  static async start(options: TelegramLoopbackOptions = {}): Promise<TelegramLoopback> {
    let self: TelegramLoopback | undefined;
    const server = createServer((req, res) => void self?.handle(req, res));
    self = new TelegramLoopback(server, options);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return self;
  }

  /** The apiRoot to give grammY (TELEGRAM_API_URL). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * The next `times` calls of `method` (for one chat, if given) fail with this answer (e.g. a 429 with retry_after).
   */
  failNext(method: string, answer: BotApiError, options: { times?: number; chatId?: number } = {}): this {
    for (let i = 0; i < (options.times ?? 1); i++)
      this.faults.push({ method, answer, ...(options.chatId === undefined ? {} : { chatId: options.chatId }) });
    return this;
  }

  /** A user writes in a chat (their private chat with the bot unless another chat is given). */
  sendText(
    from: TelegramUser,
    text: string,
    where: { chatId?: number; chatType?: string; threadId?: number } = {},
  ): LoopbackMessage {
    const chatId = where.chatId ?? from.id;
    const command = /^\/\w+(@\w+)?/.exec(text);
    const message = this.store(chatId, where.chatType ?? (chatId === from.id ? 'private' : 'supergroup'), from, text, {
      ...(command ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
      ...(where.threadId === undefined ? {} : { message_thread_id: where.threadId, is_topic_message: true }),
    });
    this.updates.push({ message: wire(message) });
    return message;
  }

  /** A user taps an inline button of a bot message. */
  tap(from: TelegramUser, message: LoopbackMessage, data: string): string {
    const id = `${++this.callbackSeq}${Date.now()}`;
    this.updates.push({
      callback_query: { id, from, message: wire(message), chat_instance: String(message.chat.id), data },
    });
    return id;
  }

  /** Every message of a chat, in order (the users' and the bot's). */
  messages(chatId: number): LoopbackMessage[] {
    return this.chats.get(chatId) ?? [];
  }

  /** The bot's messages in a chat, in order. */
  botMessages(chatId: number): LoopbackMessage[] {
    return this.messages(chatId).filter((m) => m.from.id === this.botUser.id);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return pollUntil(condition, timeoutMs, what);
  }

  async close(): Promise<void> {
    this.updates.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://loopback');
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const method = match?.[2] ?? '';
    let params: Record<string, unknown> = {};
    const record = (status: number) => this.calls.push({ method, params, at: Date.now(), status });
    try {
      if (!match) throw new BotApiFailure({ error_code: 404, description: 'Not Found' });
      if (match[1] !== this.token) throw new BotApiFailure({ error_code: 401, description: 'Unauthorized' });
      params = await readParams(req, url);
      const handler = Object.hasOwn(this.handlers, method) ? this.handlers[method] : undefined;
      if (!handler) throw new BotApiFailure({ error_code: 404, description: 'Not Found: method not found' });
      const fault = this.faults.findIndex(
        (f) => f.method === method && (f.chatId === undefined || f.chatId === Number(params.chat_id)),
      );
      if (fault >= 0) throw new BotApiFailure(this.faults.splice(fault, 1)[0]!.answer);
      const result = await handler(params, req);
      record(200);
      sendAnswer(res, result);
    } catch (err) {
      const answer =
        err instanceof BotApiFailure
          ? err.answer
          : { error_code: 500, description: `Internal Server Error: ${String(err)}` };
      record(answer.error_code);
      sendError(res, answer);
    }
  }

  private methods(): Record<string, Handler> {
    return {
      getMe: () => ({
        ...this.botUser,
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
      }),
      getUpdates: (p, req) => this.updates.poll(p, req),
      setWebhook: (p) => this.updates.setWebhook(p),
      deleteWebhook: (p) => this.updates.deleteWebhook(p),
      getWebhookInfo: () => this.updates.webhookInfo(),
      setMyCommands: (p) => {
        const commands = typeof p.commands === 'string' ? (JSON.parse(p.commands) as unknown) : p.commands;
        if (!Array.isArray(commands) || commands.length > 100)
          throw badRequest('commands must be an array of at most 100 BotCommand');
        for (const c of commands as Array<{ command?: unknown; description?: unknown }>) {
          if (typeof c.command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(c.command))
            throw badRequest('BOT_COMMAND_INVALID');
          if (typeof c.description !== 'string' || c.description.length < 1 || c.description.length > 256)
            throw badRequest('BOT_COMMAND_DESCRIPTION_INVALID');
        }
        this.myCommands = commands as Array<{ command: string; description: string }>;
        return true;
      },
      sendChatAction: (p) => {
        this.chatOf(p);
        return true;
      },
      sendMessage: (p) => {
        const { text, entities } = checkText(p.text, p.entities);
        const markup = checkMarkup(p.reply_markup);
        const chatId = this.chatOf(p);
        const thread =
          typeof p.message_thread_id === 'number'
            ? { message_thread_id: p.message_thread_id, is_topic_message: true }
            : {};
        const quoted = (p.reply_parameters as { message_id?: unknown } | undefined)?.message_id;
        const reply = typeof quoted === 'number' ? { reply_to_message_id: quoted } : {};
        return wire(
          this.store(chatId, 'private', this.botUser, text, {
            ...(entities ? { entities } : {}),
            ...(markup ? { reply_markup: markup } : {}),
            ...thread,
            ...reply,
          }),
        );
      },
      editMessageText: (p) => {
        const message = this.botMessage(p);
        const { text, entities } = checkText(p.text, p.entities);
        const markup = checkMarkup(p.reply_markup);
        if (
          text === message.text &&
          JSON.stringify(entities) === JSON.stringify(message.entities) &&
          JSON.stringify(markup) === JSON.stringify(message.reply_markup)
        ) {
          throw badRequest(
            'message is not modified: specified new message content and reply markup are exactly the same as ' +
              'a current content and reply markup of the message',
          );
        }
        Object.assign(message, { text, entities, reply_markup: markup });
        message.versions.push({ text, ...(entities ? { entities } : {}), at: Date.now() });
        return wire(message);
      },
      editMessageReplyMarkup: (p) => {
        const message = this.botMessage(p);
        message.reply_markup = checkMarkup(p.reply_markup);
        return wire(message);
      },
      answerCallbackQuery: (p) => {
        if (typeof p.callback_query_id !== 'string' || p.callback_query_id.length === 0)
          throw badRequest('query is too old and response timeout expired or query ID is invalid');
        return true;
      },
      deleteMessage: (p) => {
        const list = this.chats.get(this.chatOf(p)) ?? [];
        const at = list.findIndex((m) => m.message_id === p.message_id);
        if (at < 0) throw badRequest('message to delete not found');
        list.splice(at, 1);
        return true;
      },
    };
  }

  private chatOf(p: Record<string, unknown>): number {
    const id = typeof p.chat_id === 'string' ? Number(p.chat_id) : p.chat_id;
    if (typeof id !== 'number' || !Number.isFinite(id)) throw badRequest('chat_id is empty');
    if (!this.chats.has(id)) throw badRequest('chat not found');
    return id;
  }

  private botMessage(p: Record<string, unknown>): LoopbackMessage {
    const message = this.messages(this.chatOf(p)).find((m) => m.message_id === p.message_id);
    if (!message) throw badRequest('message to edit not found');
    if (message.from.id !== this.botUser.id) throw badRequest("message can't be edited");
    return message;
  }

  private store(
    chatId: number,
    type: string,
    from: TelegramUser,
    text: string,
    extra: Partial<LoopbackMessage>,
  ): LoopbackMessage {
    const list = this.chats.get(chatId) ?? [];
    this.chats.set(chatId, list);
    const message_id = (list.at(-1)?.message_id ?? 0) + 1;
    const date = Math.floor(Date.now() / 1000);
    const message: LoopbackMessage = {
      message_id,
      chat: { id: chatId, type: list[0]?.chat.type ?? type },
      from,
      date,
      text,
      ...extra,
      versions: [{ text, ...(extra.entities ? { entities: extra.entities } : {}), at: Date.now() }],
    };
    list.push(message);
    return message;
  }
}

/** A message as the Bot API serialises it (without the loopback's own bookkeeping). */
function wire(m: LoopbackMessage): Record<string, unknown> {
  const { versions: _versions, ...rest } = m;
  return JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
}
