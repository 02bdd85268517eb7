/** Where a reply goes: a chat, and the forum topic inside it when there is one. */
export interface ChatRef {
  readonly chatId: number;
  readonly threadId?: number;
}

/** The key of a chat's state: each topic of a forum group is a conversation of its own. */
export function chatKeyOf(ref: ChatRef): string {
  return ref.threadId === undefined ? String(ref.chatId) : `${ref.chatId}:${ref.threadId}`;
}

/** The send parameters that put a message into the chat's topic. */
export function threadParams(ref: ChatRef): { message_thread_id?: number } {
  return ref.threadId === undefined ? {} : { message_thread_id: ref.threadId };
}
