import type { ConversationMessage } from '#contracts';
import { NEIGHBOUR_WINDOW, SITTING_GAP_MS } from '#ranking';

/** How a message reads as a memory: self-contained, with who said it. */
export function messageContent(m: ConversationMessage): string {
  return `${m.speaker}: ${m.content}`;
}

const DATE = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  weekday: 'long',
  timeZone: 'UTC',
});

/**
 * Each message's indexed context (contextual retrieval): the date it was said, and the NEIGHBOUR_WINDOW
 * messages before and after it in the same sitting (messages more than SITTING_GAP_MS apart belong to
 * different sittings; messages without a time share their neighbours'). The same rule the index applies to
 * plain memories by write order, made explicit because a conversation says its own order and times.
 */
export function conversationContexts(messages: readonly ConversationMessage[]): string[] {
  const times = messages.map((m) => (m.time ? Date.parse(m.time) : undefined));
  const sitting: number[] = [];
  messages.forEach((_, i) => {
    const [a, b] = [times[i - 1], times[i]];
    const split = i > 0 && a !== undefined && b !== undefined && Math.abs(b - a) > SITTING_GAP_MS;
    sitting.push(i === 0 ? 0 : sitting[i - 1]! + (split ? 1 : 0));
  });
  return messages.map((_, i) => {
    const around: string[] = [];
    for (let j = Math.max(0, i - NEIGHBOUR_WINDOW); j <= Math.min(messages.length - 1, i + NEIGHBOUR_WINDOW); j++) {
      if (j !== i && sitting[j] === sitting[i]) around.push(messageContent(messages[j]!));
    }
    const date = times[i] === undefined ? [] : [DATE.format(times[i])];
    return [...date, ...around].join('\n');
  });
}
