import type { SessionMessage } from '#contracts';

/** The marker that opens every summary message, so a later compaction recognises an earlier summary. */
export const SUMMARY_MARKER = '[Compacted summary';

export interface TranscriptLine {
  readonly role: string;
  readonly text: string;
}

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** One readable line per block: text, a tool call with its input, a tool result. */
export function transcriptLines(messages: readonly SessionMessage[]): TranscriptLine[] {
  const out: TranscriptLine[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') {
      out.push({ role: m.role, text: m.content });
      continue;
    }
    for (const b of m.content) {
      if (b.type === 'text') out.push({ role: m.role, text: b.text });
      else if (b.type === 'tool_use')
        out.push({ role: 'tool call', text: `${b.name}(${clip(JSON.stringify(b.input), 300)})` });
      else {
        const content = typeof b.content === 'string' ? b.content : (b.content ?? []).map((t) => t.text).join('\n');
        out.push({ role: b.is_error ? 'tool error' : 'tool result', text: content });
      }
    }
  }
  return out;
}

// One block of the transcript a summariser reads: its head and tail (a huge tool output says little more).
const BLOCK_MAX = 4_000;

const clipMiddle = (s: string, max: number) =>
  s.length <= max
    ? s
    : `${s.slice(0, max * 0.75)}\n[… ${s.length - max} characters left out …]\n${s.slice(-max * 0.25)}`;

/** The transcript as plain text, for the model: each block clipped, the oldest lines dropped beyond `maxChars`. */
export function renderTranscript(messages: readonly SessionMessage[], maxChars = Infinity): string {
  const lines = transcriptLines(messages).map((l) => `${l.role}: ${clipMiddle(l.text, BLOCK_MAX)}`);
  let total = lines.reduce((n, l) => n + l.length + 2, 0);
  let first = 0;
  while (total > maxChars && first < lines.length - 1) total -= lines[first++]!.length + 2;
  const dropped = first > 0 ? [`[${first} older transcript lines left out to fit]`] : [];
  return [...dropped, ...lines.slice(first)].join('\n\n');
}
