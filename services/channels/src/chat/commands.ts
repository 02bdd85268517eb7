import { randomBytes } from 'node:crypto';
import { AgentRoutes, CompactorRoutes, MemoryRoutes, TurnRoutes } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import { isAlfredError } from '#errors';
import type { AccessList } from './access.js';
import type { Conversation, Conversations } from './conversations.js';

/** What a command handler gets: the chat, who sent it, what follows the command. */
export interface CommandCall {
  readonly conv: Conversation;
  readonly userId: number;
  readonly args: string;
  readonly context: MessageContext;
  /** True while a turn of this chat runs here. */
  readonly busy: boolean;
  /** Waits up to `ms` for that turn to end (a command sent as an answer ends need not be refused); true when it did. */
  readonly idle: (ms: number) => Promise<boolean>;
}

/** How long /new and /compact wait for a turn that is about to end before refusing. */
const IDLE_WAIT_MS = 3_000;

/** A reply: plain text, optionally with inline buttons. */
export interface CommandReply {
  readonly text: string;
  readonly buttons?: ReadonlyArray<{ readonly text: string; readonly data: string }>;
}

/** The bot's commands as Telegram's command menu lists them (setMyCommands) and /help explains them. */
export const BOT_COMMANDS: ReadonlyArray<{
  readonly command: string;
  readonly description: string;
  readonly usage?: string;
}> = [
  { command: 'new', description: 'start a new conversation' },
  { command: 'agent', description: 'talk to another agent (/agent alone lists them)', usage: '/agent NAME' },
  { command: 'compact', description: 'summarise this conversation to free context' },
  { command: 'remember', description: 'store a memory', usage: '/remember TEXT' },
  { command: 'forget', description: 'forget what /remember stored last; /forget TEXT — choose memories to forget' },
  { command: 'status', description: 'agent, session and what is running' },
  { command: 'cancel', description: 'stop the reply being written' },
  { command: 'id', description: 'your Telegram user id' },
  { command: 'help', description: 'what I can do' },
];

export const HELP = [
  'Talk to me and your agent answers. Commands:',
  ...BOT_COMMANDS.map((c) => `${c.usage ?? `/${c.command}`} — ${c.description}`),
].join('\n');

/** Button data of a /forget candidate: `fg:<nonce>:<index>`. */
export const FORGET_DATA = /^fg:([0-9a-f]{8}):(\d{1,2})$/;

/** The chat commands; each acts through the bus routes the gateway uses, for the chat's agent. */
export class Commands {
  constructor(
    private readonly bus: Bus,
    private readonly conversations: Conversations,
    private readonly access: AccessList,
  ) {}

  async new(c: CommandCall): Promise<CommandReply> {
    if (c.busy && !(await c.idle(IDLE_WAIT_MS)))
      return { text: '⏳ A reply is still being written; /cancel it first.' };
    const session = await this.conversations.startSession(c.conv, c.context);
    return { text: `🆕 New conversation with ${c.conv.state.agent} (session ${session.id}).` };
  }

  async agent(c: CommandCall): Promise<CommandReply> {
    const mine = this.access.agentsOf(c.userId);
    const name = c.args.trim().toLowerCase();
    if (!name)
      return {
        text: `You talk to ${c.conv.state.agent}. Agents you may use: ${mine.join(', ')}.\nSwitch with /agent NAME.`,
      };
    if (!mine.includes(name)) return { text: `You may not talk to ${name}. Agents you may use: ${mine.join(', ')}.` };
    try {
      await this.bus.request(AgentRoutes.get, { scope: this.conversations.scopeOf(name) }, { context: c.context });
    } catch (err) {
      if (isAlfredError(err) && err.status === 404) return { text: `There is no agent named ${name}.` };
      throw err;
    }
    const state = await this.conversations.switchAgent(c.conv, name);
    const resumed = state.sessions[name] ? ' Your earlier conversation with it continues; /new starts afresh.' : '';
    return { text: `🤖 You now talk to ${name}.${resumed}` };
  }

  async compact(c: CommandCall): Promise<CommandReply> {
    if (c.busy && !(await c.idle(IDLE_WAIT_MS)))
      return { text: '⏳ A reply is still being written; compact after it.' };
    const session = await this.conversations.sessionOf(c.conv, c.context);
    const r = await this.bus.request(
      CompactorRoutes.compact,
      { scope: c.conv.scope, session_id: session.id },
      { context: c.context, timeoutMs: 180_000 },
    );
    const n = (x: number) => x.toLocaleString('en-US');
    return {
      text:
        `🗜 Compacted: ${n(r.tokens_before)} → ${n(r.tokens_after)} tokens (${r.messages_compacted} ` +
        `messages summarised).`,
    };
  }

  async remember(c: CommandCall): Promise<CommandReply> {
    const content = c.args.trim();
    if (!content) return { text: 'Tell me what to remember: /remember TEXT' };
    const m = await this.bus.request(
      MemoryRoutes.create,
      { scope: c.conv.scope, memory: { content, tags: ['telegram'] }, writer: { via: 'telegram' } },
      { context: c.context },
    );
    await this.conversations.update(c.conv, (s) => ({ ...s, last_memory: { agent: s.agent, id: m.id } }));
    return { text: `🧠 ${c.conv.state.agent} will remember that.` };
  }

  async forget(c: CommandCall): Promise<CommandReply> {
    const query = c.args.trim();
    if (!query) return this.forgetLast(c);
    const found = await this.bus.request(
      MemoryRoutes.search,
      { scope: c.conv.scope, query: { q: query, limit: 5 } },
      { context: c.context },
    );
    if (found.results.length === 0) return { text: `${c.conv.state.agent} has no memory matching “${query}”.` };
    const nonce = randomBytes(4).toString('hex');
    const ids = found.results.map((r) => r.id);
    await this.conversations.update(c.conv, (s) => ({ ...s, forget: { nonce, agent: s.agent, ids } }));
    const buttons = found.results.map((r, i) => ({ text: `🗑 ${snippet(r.content)}`, data: `fg:${nonce}:${i}` }));
    return { text: 'Which memory should I forget? Tap one.', buttons };
  }

  /** A tap on a /forget candidate. */
  async forgetChosen(c: CommandCall, data: string): Promise<string> {
    const [, nonce, index] = FORGET_DATA.exec(data)!;
    const offer = c.conv.state.forget;
    const id = offer?.nonce === nonce ? offer.ids[Number(index)] : undefined;
    if (!offer || id === undefined) return 'That list is out of date; ask again with /forget TEXT.';
    if (!this.access.may(c.userId, offer.agent)) return `You may not change ${offer.agent}'s memories.`;
    return this.deleteMemory(c, offer.agent, id);
  }

  async status(c: CommandCall): Promise<CommandReply> {
    const session = await this.conversations.sessionOf(c.conv, c.context);
    const tokens = session.tokens ? `, about ${session.tokens.count} tokens` : '';
    const lines = [
      `🤖 Agent: ${c.conv.state.agent}`,
      `💬 Session: ${session.id} (${session.message_count} messages${tokens})`,
      `🧩 Active skill: ${session.active_skill ?? 'none'}`,
      c.busy ? '⏳ A reply is being written.' : '✅ Idle.',
    ];
    return { text: lines.join('\n') };
  }

  async cancel(c: CommandCall): Promise<CommandReply> {
    const session = c.conv.state.sessions[c.conv.state.agent];
    if (!session) return { text: 'Nothing is running.' };
    try {
      await this.bus.request(TurnRoutes.cancel, { scope: c.conv.scope, session_id: session }, { context: c.context });
      return { text: '⏹ Stopping the reply.' };
    } catch (err) {
      if (isAlfredError(err) && err.status === 404) return { text: 'Nothing is running.' };
      throw err;
    }
  }

  private async forgetLast(c: CommandCall): Promise<CommandReply> {
    const last = c.conv.state.last_memory;
    if (!last) return { text: 'Nothing to forget from this chat yet. /forget TEXT finds memories to forget.' };
    return { text: await this.deleteMemory(c, last.agent, last.id) };
  }

  private async deleteMemory(c: CommandCall, agent: string, id: string): Promise<string> {
    try {
      await this.bus.request(
        MemoryRoutes.delete,
        { scope: this.conversations.scopeOf(agent), id },
        { context: c.context },
      );
    } catch (err) {
      if (!isAlfredError(err) || err.status !== 404) throw err;
    }
    await this.conversations.update(c.conv, (s) => ({
      ...s,
      ...(s.last_memory?.id === id ? { last_memory: undefined } : {}),
      ...(s.forget?.ids.includes(id) ? { forget: undefined } : {}),
    }));
    return `🗑 ${agent} forgot it.`;
  }
}

function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 40 ? `${line.slice(0, 39)}…` : line;
}
