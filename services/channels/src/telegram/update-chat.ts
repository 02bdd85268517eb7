import type { Message, Update } from 'grammy/types';
import type { ChatRef } from './chat-ref.js';

function refOf(
  message: Pick<Message, 'chat' | 'is_topic_message' | 'message_thread_id'> | undefined,
): ChatRef | undefined {
  if (!message) return undefined;
  const topic = message.is_topic_message && message.message_thread_id !== undefined;
  return { chatId: message.chat.id, ...(topic ? { threadId: message.message_thread_id } : {}) };
}

/** The chat (and forum topic) an update belongs to, if any: messages and button taps. */
export function chatOfUpdate(update: Update): ChatRef | undefined {
  const tapped = update.callback_query?.message;
  return refOf(
    update.message ?? update.edited_message ?? (tapped && 'chat' in tapped ? (tapped as Message) : undefined),
  );
}

/** The update kinds the bot asks Telegram for. */
export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;
