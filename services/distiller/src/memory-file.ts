import { contentWords, coverage, insightId } from './text-similarity.js';

export const INSIGHTS_HEADER = '## Insights';
const MARK = /<!--\s*insight:([0-9a-f]{12})\s*-->/;

export interface FileInsight {
  readonly id: string;
  readonly text: string;
}

/** The insights MEMORY.md already holds (lines carrying an insight marker). */
export function parseInsights(content: string): FileInsight[] {
  return content.split('\n').flatMap((line) => {
    const m = line.match(MARK);
    return m
      ? [
          {
            id: m[1]!,
            text: line
              .replace(MARK, '')
              .replace(/^\s*-\s*/, '')
              .trim(),
          },
        ]
      : [];
  });
}

/** True when an existing insight already says this text (same id, or ≥ 80% of its words). */
export function isKnown(text: string, known: readonly FileInsight[], knownIds: ReadonlySet<string>): boolean {
  if (knownIds.has(insightId(text))) return true;
  const words = contentWords(text);
  return known.some((k) => coverage(words, contentWords(k.text)) >= 0.8);
}

/** Appends insights under the insights section (created at the end when absent), each with its id marker. */
export function appendInsights(content: string, insights: ReadonlyArray<{ text: string; support?: number }>): string {
  const bullets = insights.map(
    (i) =>
      `- ${i.text}${(i.support ?? 1) > 1 ? ` (seen ${i.support} times)` : ''} <!-- insight:${insightId(i.text)} -->`,
  );
  const lines = content.replace(/\s+$/, '').split('\n');
  const start = lines.findIndex((l) => l.trim() === INSIGHTS_HEADER);
  if (start < 0) return `${lines.join('\n')}\n\n${INSIGHTS_HEADER}\n\n${bullets.join('\n')}\n`;
  let end = start + 1;
  while (end < lines.length && !/^#{1,2}\s/.test(lines[end]!)) end++;
  while (end > start + 1 && lines[end - 1]!.trim() === '') end--;
  lines.splice(end, 0, ...(end === start + 1 ? ['', ...bullets] : bullets));
  return `${lines.join('\n')}\n`;
}
