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
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
}

function render(entries: IndexEntry[], format: IndexFormat): string {
  if (entries.length === 0) return '';
  if (format === IndexFormat.Markdown) {
    return ['## Available skills', ...entries.map((e) => `- **${e.name}** — ${e.description}`)].join('\n') + '\n';
  }
  const skills = entries.map(
    (e) =>
      `  <skill>\n    <name>${escapeXml(e.name)}</name>\n    <description>${escapeXml(e.description)}</description>\n` +
      `    <location>${escapeXml(e.location)}</location>\n  </skill>`,
  );
  return ['<available_skills>', ...skills, '</available_skills>'].join('\n') + '\n';
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
 * Renders the index in a stable order (by name). Over budget, descriptions are shortened first
 * (to their first sentence, then to ever shorter cuts); only then are skills dropped, lowest
 * precedence first and, within a root, alphabetically last first.
 */
export function renderIndex(all: IndexEntry[], format: IndexFormat, options: RenderOptions = {}): RenderedIndex {
  const sorted = all.map((e) => ({ ...e, description: oneLine(e.description) })).sort(byName);
  const budget = options.budget ?? Infinity;
  const fits = (entries: IndexEntry[]) => render(entries, format).length <= budget;
  const done = (entries: IndexEntry[], dropped: string[] = []): RenderedIndex => ({
    text: render(entries, format),
    truncated: { shortened: entries.filter((e, i) => e.description !== sortedKept(sorted, entries)[i]).length, dropped },
  });
  if (fits(sorted)) return done(sorted);
  const shortenings = [firstSentence, ...SHORTEN_STEPS.map((n) => (t: string) => ellipsis(firstSentence(t), n))];
  let current = sorted;
  for (const shorten of shortenings) {
    current = sorted.map((e) => ({ ...e, description: shorten(e.description) }));
    if (fits(current)) return done(current);
  }
  const dropOrder = [...current].sort((a, b) => b.rank - a.rank || byName(b, a));
  const dropped: string[] = [];
  for (const victim of dropOrder) {
    current = current.filter((e) => e.name !== victim.name);
    dropped.push(victim.name);
    if (fits(current)) break;
  }
  return done(current, dropped);
}

/** The original (one-line) descriptions of the entries still present, in their order. */
function sortedKept(sorted: IndexEntry[], kept: IndexEntry[]): string[] {
  const original = new Map(sorted.map((e) => [e.name, e.description]));
  return kept.map((e) => original.get(e.name) ?? e.description);
}
