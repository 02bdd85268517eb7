import { SessionRoutes, type Scope, type SessionSummary, type SessionView } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import { isAlfredError } from '#errors';
import { emptyChat, type ChannelStore, type ChatState } from '../store/channel.store.js';
import { chatKeyOf, type ChatRef } from '../telegram/chat-ref.js';

/** One chat's conversation as a handler sees it: where it is, who it talks to, for which tenant. */
export interface Conversation {
  readonly chat: ChatRef;
  readonly key: string;
  readonly state: ChatState;
  readonly scope: Scope;
}

/**
 * Chats and their sessions. Sessions are made and read only through the session routes agent-runtime serves,
 * as the gateway does; the chat → session mapping is the channel's own state.
 */
export class Conversations {
  constructor(
    private readonly bus: Bus,
    private readonly store: ChannelStore,
    private readonly tenant: string,
    private readonly bot: string,
  ) {}

  scopeOf(agent: string): Scope {
    return { tenant: this.tenant, agent };
  }

  /** The chat's state, starting it with `firstAgent` when the chat is new. */
  async open(chat: ChatRef, firstAgent: string): Promise<Conversation> {
    const key = chatKeyOf(chat);
    const state =
      (await this.store.getChat(key)) ?? (await this.store.updateChat(key, (s) => s ?? emptyChat(firstAgent)));
    return { chat, key, state, scope: this.scopeOf(state.agent) };
  }

  /** The chat's session with its current agent, made on first use (or again when it was deleted meanwhile). */
  async sessionOf(conv: Conversation, ctx?: MessageContext): Promise<SessionSummary> {
    const existing = conv.state.sessions[conv.state.agent];
    const found = existing ? await this.find(conv.scope, existing, ctx) : undefined;
    return found ?? this.startSession(conv, ctx);
  }

  /** A new session for the chat's current agent; later messages go to it. */
  async startSession(conv: Conversation, ctx?: MessageContext): Promise<SessionSummary> {
    const agent = conv.state.agent;
    const metadata = {
      channel: 'telegram',
      bot: this.bot,
      chat_id: conv.chat.chatId,
      ...(conv.chat.threadId === undefined ? {} : { thread_id: conv.chat.threadId }),
    };
    const session = await this.bus.request(SessionRoutes.create, { scope: conv.scope, metadata }, { context: ctx });
    await this.store.updateChat(conv.key, (s) => {
      const base = s ?? emptyChat(agent);
      return { ...base, sessions: { ...base.sessions, [agent]: session.id } };
    });
    return session;
  }

  /** Switches the chat to another agent (its earlier session with that agent, if any, resumes). */
  async switchAgent(conv: Conversation, agent: string): Promise<ChatState> {
    return this.store.updateChat(conv.key, (s) => ({ ...(s ?? emptyChat(agent)), agent }));
  }

  update(conv: Conversation, change: (s: ChatState) => ChatState): Promise<ChatState> {
    return this.store.updateChat(conv.key, (s) => change(s ?? conv.state));
  }

  /** The session, or undefined when it is gone (deleted through the API, or with its agent). */
  async find(scope: Scope, id: string, ctx?: MessageContext): Promise<SessionView | undefined> {
    try {
      return await this.bus.request(SessionRoutes.get, { scope, id }, { context: ctx });
    } catch (err) {
      if (isAlfredError(err) && err.status === 404) return undefined;
      throw err;
    }
  }
}
