import type { Api } from 'grammy';
import { ErrorCode, TurnRoutes, type TurnEvent } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import { isAlfredError } from '#errors';
import type { UpdateRecord } from '../store/channel.store.js';
import { threadParams } from '../telegram/chat-ref.js';
import type { Conversation, Conversations } from './conversations.js';

type ConfirmationEvent = Extract<TurnEvent, { type: 'confirmation_request' }>;

/** Button data: `cf:y:<request id>` approves, `cf:n:<request id>` declines (Telegram allows 64 bytes). */
const DATA = /^cf:([yn]):([A-Za-z0-9_-]{1,60})$/;

export interface Tap {
  readonly conv: Conversation;
  readonly data: string;
  readonly userId: number;
  readonly userName: string;
  readonly context: MessageContext;
  /** Whether this user may answer for the agent that asked. */
  readonly may: (agent: string) => boolean;
}

/**
 * The agent's confirmation requests (activate_skill and other guarded actions) as messages with two inline
 * buttons; a tap answers the request through the confirm route, as POST /sessions/{id}/confirm does.
 */
export class Confirmations {
  constructor(
    private readonly bus: Bus,
    private readonly api: Api,
    private readonly conversations: Conversations,
  ) {}

  static isTap(data: string): boolean {
    return DATA.test(data);
  }

  /** Sends the request's buttons; returns the message that carries them. */
  async ask(
    conv: Conversation,
    record: UpdateRecord,
    e: ConfirmationEvent,
  ): Promise<{ readonly request_id: string; readonly message_id: number; readonly text: string }> {
    const what = e.action === 'activate_skill' ? `activate the skill “${e.skill}”` : `run “${e.skill}”`;
    const text = `🔐 ${record.agent} asks to ${what}.\n\n${e.prompt}`;
    const keyboard = {
      inline_keyboard: [
        [
          { text: '✅ Approve', callback_data: `cf:y:${e.request_id}` },
          { text: '❌ Decline', callback_data: `cf:n:${e.request_id}` },
        ],
      ],
    };
    // Recorded before the buttons exist: a tap can come the moment the message shows.
    await this.conversations.update(conv, (s) => ({
      ...s,
      confirmations: { ...s.confirmations, [e.request_id]: { agent: record.agent!, session_id: record.session_id! } },
    }));
    const sent = await this.api.sendMessage(conv.chat.chatId, text, {
      reply_markup: keyboard,
      ...threadParams(conv.chat),
    });
    return { request_id: e.request_id, message_id: sent.message_id, text };
  }

  /** At the end of a turn: requests nobody answered are closed, their buttons removed. */
  async expire(
    conv: Conversation,
    asked: ReadonlyArray<{ readonly request_id: string; readonly message_id: number; readonly text: string }>,
  ): Promise<void> {
    if (asked.length === 0) return;
    const ids = new Set(asked.map((a) => a.request_id));
    let open: string[] = [];
    await this.conversations.update(conv, (s) => {
      open = Object.keys(s.confirmations).filter((id) => ids.has(id));
      return {
        ...s,
        confirmations: Object.fromEntries(Object.entries(s.confirmations).filter(([id]) => !ids.has(id))),
      };
    });
    for (const a of asked.filter((x) => open.includes(x.request_id))) {
      await this.api
        .editMessageText(
          conv.chat.chatId,
          a.message_id,
          `${a.text}\n\n— Not answered in time; the agent went on without it.`,
        )
        .catch(() => undefined);
    }
  }

  /**
   * Answers the request a button names and closes the buttons' message; returns the notice Telegram shows the tapper.
   */
  async answer(tap: Tap, message: { readonly message_id: number; readonly text: string }): Promise<string> {
    const [, yn, requestId] = DATA.exec(tap.data)!;
    const approve = yn === 'y';
    const pending = tap.conv.state.confirmations[requestId!];
    if (!pending) {
      await this.close(tap, message, '— This request is no longer open.');
      return 'This request is no longer open.';
    }
    if (!tap.may(pending.agent)) return `You may not answer for ${pending.agent}.`;
    let notice = approve ? 'Approved' : 'Declined';
    try {
      const scope = this.conversations.scopeOf(pending.agent);
      await this.bus.request(
        TurnRoutes.confirm,
        { scope, session_id: pending.session_id, request_id: requestId!, approve },
        { context: tap.context },
      );
    } catch (err) {
      if (!isAlfredError(err) || (err.code !== ErrorCode.NotFound && err.code !== ErrorCode.Conflict)) throw err;
      notice = err.code === ErrorCode.Conflict ? 'It was already answered.' : 'The agent stopped waiting for this.';
    }
    await this.conversations.update(tap.conv, (s) => {
      const { [requestId!]: _answered, ...rest } = s.confirmations;
      return { ...s, confirmations: rest };
    });
    const outcome =
      notice === 'Approved'
        ? `✅ Approved by ${tap.userName}`
        : notice === 'Declined'
          ? `❌ Declined by ${tap.userName}`
          : `— ${notice}`;
    await this.close(tap, message, outcome);
    return notice;
  }

  /** Editing without reply_markup removes the buttons, so a request cannot be answered twice from the chat. */
  private async close(
    tap: Tap,
    message: { readonly message_id: number; readonly text: string },
    outcome: string,
  ): Promise<void> {
    await this.api.editMessageText(tap.conv.chat.chatId, message.message_id, `${message.text}\n\n${outcome}`);
  }
}
