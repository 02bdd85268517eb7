import type { Bot, Context } from 'grammy';
import type { MessageContext } from '#bus';
import { isAlfredError } from '#errors';
import { chatOfUpdate } from '../telegram/update-chat.js';
import { threadParams } from '../telegram/chat-ref.js';
import type { AccessList } from './access.js';
import { Commands, FORGET_DATA, HELP, type CommandCall, type CommandReply } from './commands.js';
import { Confirmations } from './confirmations.js';
import type { Conversation, Conversations } from './conversations.js';
import { sendText, type TurnRelay } from './turn-relay.js';

/** What the queue worker knows about the update grammY is handling. */
export interface UpdateJob {
  readonly context: MessageContext;
  readonly signal: AbortSignal;
  readonly admitted: () => void;
}

export interface BotHandlerDeps {
  readonly access: AccessList;
  readonly conversations: Conversations;
  readonly commands: Commands;
  readonly confirmations: Confirmations;
  readonly relay: TurnRelay;
  readonly jobOf: (updateId: number) => UpdateJob;
}

type CommandName = 'new' | 'agent' | 'compact' | 'remember' | 'forget' | 'status' | 'cancel';
const COMMANDS: readonly CommandName[] = ['new', 'agent', 'compact', 'remember', 'forget', 'status', 'cancel'];

type ConvOf = (ctx: Context) => Conversation;

/** The bot's behaviour: who may talk, the commands, button taps, and text messages that become agent turns. */
export function installBotHandlers(bot: Bot, deps: BotHandlerDeps): void {
  const conversations = new WeakMap<Context, Conversation>();
  const convOf: ConvOf = (ctx) => conversations.get(ctx)!;
  bot.use(async (ctx, next) => {
    const conv = await admit(ctx, deps);
    if (!conv) return;
    conversations.set(ctx, conv);
    await next();
  });
  installCommands(bot, deps, convOf);
  bot.on('callback_query:data', (ctx) => onTap(ctx, deps, callOf(ctx, deps, convOf)));
  bot.on('message:text', async (ctx) => {
    const conv = convOf(ctx);
    const text = ctx.message.text;
    if (text.startsWith('/')) return reply(ctx, conv, { text: `I do not know ${text.split(/\s/)[0]}.\n\n${HELP}` });
    const job = deps.jobOf(ctx.update.update_id);
    // A refusal (an agent that does not exist, a session gone) is told; the reply itself is the relay's.
    const run = { updateId: ctx.update.update_id, messageId: ctx.message.message_id, conv, text, ...job };
    const refused = await refusalAsReply(async () => {
      await deps.relay.run(run);
      return undefined;
    });
    if (refused) await reply(ctx, conv, refused);
  });
  bot.on('message', (ctx) => reply(ctx, convOf(ctx), { text: 'I can read text messages only, for now.' }));
}

/** Who may go on: strangers get their id and stop here; others get their chat's conversation. */
async function admit(ctx: Context, deps: BotHandlerDeps): Promise<Conversation | undefined> {
  const chat = chatOfUpdate(ctx.update);
  const from = ctx.from;
  if (!chat || !from || from.is_bot) return undefined;
  const first = deps.access.firstAgentOf(from.id);
  if (first === undefined) return void (await answerStranger(ctx, from.id));
  const conv = await deps.conversations.open(chat, first);
  if (deps.access.may(from.id, conv.state.agent) || ctx.hasCommand(['agent', 'id', 'help', 'start'])) return conv;
  const text =
    `You may not talk to ${conv.state.agent}. Switch with /agent NAME (yours: ` +
    `${deps.access.agentsOf(from.id).join(', ')}).`;
  if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text });
  else await sendText(ctx.api, chat, text);
  return undefined;
}

function callOf(ctx: Context, deps: BotHandlerDeps, convOf: ConvOf): CommandCall {
  const conv = convOf(ctx);
  const args = typeof ctx.match === 'string' ? ctx.match : '';
  const busy = deps.relay.isBusy(conv.key);
  return {
    conv,
    userId: ctx.from!.id,
    args,
    context: deps.jobOf(ctx.update.update_id).context,
    busy,
    idle: (ms) => deps.relay.idle(conv.key, ms),
  };
}

function installCommands(bot: Bot, deps: BotHandlerDeps, convOf: ConvOf): void {
  bot.command(['start', 'help'], (ctx) =>
    reply(ctx, convOf(ctx), { text: `You talk to ${convOf(ctx).state.agent}.\n\n${HELP}` }),
  );
  bot.command('id', (ctx) => reply(ctx, convOf(ctx), { text: `Your Telegram user id is ${ctx.from!.id}.` }));
  for (const name of COMMANDS) {
    bot.command(name, async (ctx) =>
      reply(ctx, convOf(ctx), await refusalAsReply(() => deps.commands[name](callOf(ctx, deps, convOf)))),
    );
  }
}

/** A button tap: a confirmation's answer or a memory to forget; Telegram is told what happened either way. */
async function onTap(ctx: Context, deps: BotHandlerDeps, c: CommandCall): Promise<void> {
  const data = ctx.callbackQuery!.data!;
  const msg = ctx.callbackQuery!.message;
  let notice = '';
  if (Confirmations.isTap(data)) {
    const userName = ctx.from!.username ? `@${ctx.from!.username}` : ctx.from!.first_name;
    const message = { message_id: msg?.message_id ?? 0, text: msg && 'text' in msg ? (msg.text ?? '') : '' };
    notice = await deps.confirmations.answer(
      { ...c, data, userName, may: (agent) => deps.access.may(c.userId, agent) },
      message,
    );
  } else if (FORGET_DATA.test(data)) {
    notice = await deps.commands.forgetChosen(c, data);
    if (msg) await ctx.api.editMessageText(msg.chat.id, msg.message_id, notice);
  }
  await ctx.answerCallbackQuery(notice ? { text: notice } : {});
}

/** A refusal (a 4xx from a service: no such session, nothing to compact…) is told to the user; other failures go up. */
async function refusalAsReply<T extends CommandReply | undefined>(run: () => Promise<T>): Promise<T | CommandReply> {
  try {
    return await run();
  } catch (err) {
    if (isAlfredError(err) && err.status < 500) return { text: `⚠️ ${err.message}` };
    throw err;
  }
}

/** Strangers learn their own id and nothing else, so an operator can add them to ALFRED_TELEGRAM_ALLOW. */
async function answerStranger(ctx: Context, userId: number): Promise<void> {
  const text = `Your Telegram user id is ${userId}.`;
  if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text });
  else if (ctx.message) await sendText(ctx.api, chatOfUpdate(ctx.update)!, text);
}

async function reply(ctx: Context, conv: Conversation, r: CommandReply): Promise<void> {
  const keyboard = r.buttons
    ? { reply_markup: { inline_keyboard: r.buttons.map((b) => [{ text: b.text, callback_data: b.data }]) } }
    : {};
  await ctx.api.sendMessage(conv.chat.chatId, r.text, { ...threadParams(conv.chat), ...keyboard });
}
