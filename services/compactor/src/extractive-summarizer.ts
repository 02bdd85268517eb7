import type { SessionMessage } from '#contracts';
import { SUMMARY_MARKER, transcriptLines, type TranscriptLine } from './transcript.js';

const MAX_LINES = 40;
const MAX_LINE_CHARS = 240;
const WORD = /[\p{L}\p{N}_./-]{3,}/gu;

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end + 1) : flat;
  return sentence.length <= MAX_LINE_CHARS ? sentence : `${sentence.slice(0, MAX_LINE_CHARS - 1)}…`;
}

const words = (s: string) => new Set((s.toLowerCase().match(WORD) ?? []) as string[]);

/** Lines sharing words with the instructions rank first, then user lines; order is kept among those chosen. */
function choose(lines: TranscriptLine[], instructions: string | undefined): TranscriptLine[] {
  if (lines.length <= MAX_LINES) return lines;
  const wanted = words(instructions ?? '');
  const scored = lines.map((line, i) => {
    const hits = [...words(line.text)].filter((w) => wanted.has(w)).length;
    return { i, score: hits * 2 + (line.role === 'user' ? 1 : 0) - i / (lines.length * 10) };
  });
  const keep = new Set(
    scored
      .sort((a, b) => b.score - a.score)
      .slice(0, MAX_LINES)
      .map((s) => s.i),
  );
  return lines.filter((_, i) => keep.has(i));
}

/**
 * The no-model summary: the leading sentence of each compacted block (an earlier summary is carried whole),
 * labelled as extractive so a reader knows nothing was rewritten.
 */
export function extractiveSummary(messages: readonly SessionMessage[], instructions?: string): string {
  const all = transcriptLines(messages);
  const earlier = all
    .filter((l) => l.text.startsWith(SUMMARY_MARKER))
    .map((l) => l.text.split('\n').slice(1).join('\n').trim());
  const lines = choose(
    all.filter((l) => !l.text.startsWith(SUMMARY_MARKER) && l.text.trim()),
    instructions,
  );
  const omitted = all.length - earlier.length - lines.length;
  return [
    `${SUMMARY_MARKER} of ${messages.length} earlier messages — extractive: no language model is configured, ` +
      `so these are the leading sentences of the compacted messages, not a rewritten summary]`,
    ...(instructions ? [`Instructions considered: ${instructions}`] : []),
    ...earlier.filter(Boolean).map((e) => `Earlier summary:\n${e}`),
    ...lines.map((l) => `- ${l.role}: ${firstSentence(l.text)}`),
    ...(omitted > 0 ? [`(${omitted} less relevant lines left out)`] : []),
  ].join('\n');
}
