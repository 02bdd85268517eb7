import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * LoCoMo's development half (shared/datasets/locomo-dev, CC BY-NC 4.0: read in place, never copied into
 * the repository). ALFRED_LOCOMO_DIR overrides where it is; without it the quality sections are skipped.
 */
export interface Turn {
  readonly id: string;
  readonly speaker: string;
  readonly text: string;
  /** The session's date and time (ISO), parsed from "1:56 pm on 8 May, 2023". */
  readonly time: string | undefined;
}

export interface Question {
  readonly q: string;
  /** Evidence turn ids that exist in the conversation (malformed ones repaired, unknown ones dropped). */
  readonly evidence: readonly string[];
}

export interface Conversation {
  readonly id: string;
  readonly turns: readonly Turn[];
  readonly questions: readonly Question[];
}

export function locomoDir(env: NodeJS.ProcessEnv = process.env): string {
  // The bench runs from dist/bench/: the repository root is two levels up, and shared/ sits beside it.
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return resolve(env.ALFRED_LOCOMO_DIR ?? join(root, '..', 'shared', 'datasets', 'locomo-dev'));
}

/** The conversations, or the reason they are not there. */
export function loadLocomo(dir = locomoDir()): { conversations: Conversation[] } | { skipped: string } {
  const file = join(dir, 'locomo-dev.json');
  if (!existsSync(file)) return { skipped: `LoCoMo not found at ${file} (set ALFRED_LOCOMO_DIR)` };
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Array<{
    sample_id: string;
    conversation: Record<string, unknown>;
    qa: RawQa[];
  }>;
  return { conversations: raw.map(parseConversation) };
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
}
interface RawQa {
  question: string;
  evidence?: unknown[];
  category: number;
}

function parseConversation(item: {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: RawQa[];
}): Conversation {
  const c = item.conversation;
  const sessions = Object.keys(c)
    .filter((k) => /^session_\d+$/.test(k))
    .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));
  const turns = sessions.flatMap((s) => {
    const time = parseSessionTime(String(c[`${s}_date_time`] ?? ''));
    return (c[s] as RawTurn[]).map((t) => ({ id: t.dia_id, speaker: t.speaker, text: t.text, time }));
  });
  const ids = new Set(turns.map((t) => t.id));
  // Category 5 is adversarial (no usable evidence); evidence strings may hold several ids or "D:11:26".
  const questions = item.qa
    .filter((q) => q.category !== 5)
    .map((q) => ({
      q: q.question,
      evidence: [
        ...new Set((q.evidence ?? []).flatMap((e) => String(e).split(/[;,\s]+/)).map((e) => e.replace(/^D:/, 'D'))),
      ].filter((e) => ids.has(e)),
    }))
    .filter((q) => q.evidence.length > 0);
  return { id: item.sample_id, turns, questions };
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00.000Z (taken as UTC). */
export function parseSessionTime(text: string): string | undefined {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/** How a turn is stored as a plain memory (the protocol): "speaker: text". */
export const turnContent = (t: Turn) => `${t.speaker}: ${t.text}`;

/** The share of a question's evidence turns among the retrieved ones. */
export function recallOf(question: Question, retrieved: Iterable<string>): number {
  const found = new Set(retrieved);
  return question.evidence.filter((e) => found.has(e)).length / question.evidence.length;
}

/**
 * The baseline: a plain BM25 over the same texts (lower-cased letter/digit runs, no stemming, no stop words,
 * k1 = 1.2, b = 0.75, Lucene's idf), per conversation, as "a 30-line BM25" is written.
 */
export class PlainBm25 {
  private readonly docs: Array<Map<string, number>>;
  private readonly lengths: number[];
  private readonly df = new Map<string, number>();
  private readonly avg: number;

  constructor(texts: readonly string[]) {
    this.docs = texts.map((t) => {
      const tf = new Map<string, number>();
      for (const w of tokens(t)) tf.set(w, (tf.get(w) ?? 0) + 1);
      return tf;
    });
    this.lengths = texts.map((t) => tokens(t).length);
    for (const d of this.docs) for (const w of d.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
    this.avg = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, texts.length);
  }

  /** Indexes of the k best documents. */
  top(query: string, k: number): number[] {
    const n = this.docs.length;
    const scores = this.docs.map((d, i) =>
      [...new Set(tokens(query))].reduce((s, w) => {
        const f = d.get(w);
        if (!f) return s;
        const idf = Math.log(1 + (n - this.df.get(w)! + 0.5) / (this.df.get(w)! + 0.5));
        return s + (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * this.lengths[i]!) / this.avg));
      }, 0),
    );
    return scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, k)
      .map(([, i]) => i);
  }
}

const tokens = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
