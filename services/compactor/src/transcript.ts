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
      else if (b.type === 'tool_use') out.push({ role: 'tool call', text: `${b.name}(${clip(JSON.stringify(b.input), 300)})` });
      else {
        const content = typeof b.content === 'string' ? b.content : (b.content ?? []).map((t) => t.text).join('\n');
        out.push({ role: b.is_error ? 'tool error' : 'tool result', text: content });
      }
    }
  }
  return out;
}

/** The transcript as plain text, for the model. */
export function renderTranscript(messages: readonly SessionMessage[]): string {
  return transcriptLines(messages)
    .map((l) => `${l.role}: ${l.text}`)
    .join('\n\n');
}
