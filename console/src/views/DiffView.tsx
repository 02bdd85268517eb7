import { diffLines } from 'diff';
import { ScrollText } from '../ui';

/**
 * Line by line what changes from `before` to `after`: removed lines marked − (red), added + (green), the rest plain.
 */
export function DiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const parts = diffLines(before, after);
  const changed = parts.some((p) => p.added || p.removed);
  return (
    <ScrollText className="diff" label={label}>
      {!changed && <span className="meta">No difference.</span>}
      {changed &&
        parts.map((p, i) => {
          const lines = p.value.replace(/\n$/, '').split('\n');
          const mark = p.added ? '+ ' : p.removed ? '− ' : '  ';
          const text = `${lines.map((l) => `${mark}${l}`).join('\n')}\n`;
          const Part = p.added ? 'ins' : p.removed ? 'del' : 'span';
          // biome-ignore lint/suspicious/noArrayIndexKey: a diff's parts have no identity but their place
          return <Part key={i}>{text}</Part>;
        })}
    </ScrollText>
  );
}

/** How many lines a change adds and removes, for a one-line summary. */
export function diffStat(before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const p of diffLines(before, after)) {
    if (p.added) added += p.count ?? 0;
    if (p.removed) removed += p.count ?? 0;
  }
  return { added, removed };
}
