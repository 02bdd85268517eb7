/** What the level-1 index needs of a skill; `rank` is its root's precedence (0 = highest). */
export interface IndexEntry {
  name: string;
  description: string;
  location: string;
  rank: number;
}

export interface RenderOptions {
  /** Maximum length of the rendered text in characters; unlimited when absent. */
  budget?: number;
  /**
   * A skill's smoothed success estimate (0..1; absent: no record, counted as 0.5). Given, the index lists more
   * reliable skills first and, over budget, drops less reliable ones first within a root's precedence.
   */
  estimate?: (name: string) => number | undefined;
}

export interface RenderedIndex {
  text: string;
  truncated: { shortened: number; dropped: string[] };
}

export const IndexFormat = { Markdown: 'markdown', Xml: 'xml' } as const;
export type IndexFormat = (typeof IndexFormat)[keyof typeof IndexFormat];

const SHORTEN_STEPS = [240, 160, 100, 60, 40];

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );
}

function renderEntry(e: IndexEntry, format: IndexFormat): string {
  if (format === IndexFormat.Markdown) return `- **${e.name}** — ${e.description}`;
  return (
    `  <skill>\n    <name>${escapeXml(e.name)}</name>\n    <description>${escapeXml(e.description)}</description>\n` +
    `    <location>${escapeXml(e.location)}</location>\n  </skill>`
  );
}

const FRAME: Record<IndexFormat, string[]> = {
  markdown: ['## Available skills'],
  xml: ['<available_skills>', '</available_skills>'],
};

function joinLines(lines: string[], format: IndexFormat): string {
  if (lines.length === 0) return '';
  const [head, ...tail] = FRAME[format];
  return `${[head, ...lines, ...tail].join('\n')}\n`;
}

/** Length of joinLines() for lines of these lengths, without building the string. */
function joinedLength(lengths: number[], format: IndexFormat): number {
  if (lengths.length === 0) return 0;
  return FRAME[format].reduce((n, p) => n + p.length + 1, 0) + lengths.reduce((n, l) => n + l + 1, 0);
}

function firstSentence(text: string): string {
  const m = /^(.+?[.!?])(\s|$)/.exec(text);
  return m ? m[1] : text;
}

function ellipsis(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

const byName = (a: IndexEntry, b: IndexEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Renders the index in a stable order (by name; with `estimate`, most reliable first). Over budget, descriptions are
 * shortened first (to their first sentence, then to ever shorter cuts); only then are skills dropped, lowest precedence
 * first and, within a root, alphabetically last first.
 */
export function renderIndex(all: IndexEntry[], format: IndexFormat, options: RenderOptions = {}): RenderedIndex {
  const estimate = (e: IndexEntry) => options.estimate?.(e.name) ?? 0.5;
  const order = options.estimate ? (a: IndexEntry, b: IndexEntry) => estimate(b) - estimate(a) || byName(a, b) : byName;
  const sorted = all.map((e) => ({ ...e, description: oneLine(e.description) })).sort(order);
  const budget = options.budget ?? Infinity;
  // Lengths are computed without rendering: each entry is its frame plus its (escaped) description.
  const frame = sorted.map((e) => renderEntry({ ...e, description: '' }, format).length);
  const descLength = format === IndexFormat.Xml ? (d: string) => escapeXml(d).length : (d: string) => d.length;
  let descriptions = sorted.map((e) => e.description);
  let lengths = descriptions.map((d, i) => frame[i]! + descLength(d));
  const shortenings = [firstSentence, ...SHORTEN_STEPS.map((n) => (t: string) => ellipsis(firstSentence(t), n))];
  for (const shorten of shortenings) {
    if (joinedLength(lengths, format) <= budget) break;
    descriptions = sorted.map((e) => shorten(e.description));
    lengths = descriptions.map((d, i) => frame[i]! + descLength(d));
  }
  const keep = sorted.map(() => true);
  let length = joinedLength(lengths, format);
  const dropped: string[] = [];
  const dropOrder = sorted
    .map((e, i) => ({ e, i }))
    .sort((a, b) => b.e.rank - a.e.rank || estimate(a.e) - estimate(b.e) || byName(b.e, a.e));
  for (const { e, i } of dropOrder) {
    if (length <= budget) break;
    keep[i] = false;
    dropped.push(e.name);
    length = dropped.length === sorted.length ? 0 : length - (lengths[i]! + 1);
  }
  const shortened = sorted.filter((e, i) => keep[i] && descriptions[i] !== e.description).length;
  const lines = sorted.flatMap((e, i) =>
    keep[i] ? [renderEntry({ ...e, description: descriptions[i]! }, format)] : [],
  );
  return { text: joinLines(lines, format), truncated: { shortened, dropped } };
}
