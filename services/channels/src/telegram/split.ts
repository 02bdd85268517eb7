import type { MessageEntity } from 'grammy/types';
import type { FormattedText } from './formatted-text.js';

/** Telegram's limit on a message's text, in UTF-16 code units after entity parsing. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/**
 * Where to cut at most `limit` units in: a paragraph break, else a line break, else a space, else hard (never inside a
 * surrogate pair).
 */
function cutPoint(text: string, from: number, limit: number): { end: number; next: number } {
  const hardEnd = from + limit;
  if (hardEnd >= text.length) return { end: text.length, next: text.length };
  const window = text.slice(from, hardEnd);
  const minimum = Math.floor(limit / 2);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep);
    if (at >= minimum) return { end: from + at, next: from + at + sep.length };
  }
  const code = text.charCodeAt(hardEnd - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? hardEnd - 1 : hardEnd;
  return { end, next: end };
}

/** The entities of [start, end) moved to the piece's coordinates; one crossing a cut continues in the next piece. */
function clip(entities: readonly MessageEntity[], start: number, end: number): MessageEntity[] {
  const out: MessageEntity[] = [];
  for (const e of entities) {
    const from = Math.max(e.offset, start);
    const to = Math.min(e.offset + e.length, end);
    if (to > from) out.push({ ...e, offset: from - start, length: to - from });
  }
  return out;
}

/**
 * Splits formatted text into messages of at most `limit` units. Formatting survives every cut: an entity that
 * spans one (a code block, a bold run) is closed at the end of one message and reopened at the start of the next.
 */
export function splitFormatted(ft: FormattedText, limit = TELEGRAM_TEXT_LIMIT): FormattedText[] {
  if (ft.text.length <= limit) return [ft];
  const pieces: FormattedText[] = [];
  let start = 0;
  while (start < ft.text.length) {
    const { end, next } = cutPoint(ft.text, start, limit);
    const text = ft.text.slice(start, end);
    if (text.trim().length > 0) pieces.push({ text, entities: clip(ft.entities, start, end) });
    start = next;
  }
  return pieces;
}

/** True when both render identically (used to skip edits Telegram would refuse as "not modified"). */
export function sameFormatted(a: FormattedText | undefined, b: FormattedText): boolean {
  return a !== undefined && a.text === b.text && JSON.stringify(a.entities) === JSON.stringify(b.entities);
}
