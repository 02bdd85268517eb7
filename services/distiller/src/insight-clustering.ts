import { contentWords, jaccard } from './text-similarity.js';

/** One thing the distiller reads: a memory or a user message from a session. */
export interface DistillItem {
  readonly text: string;
  readonly importance: number;
  readonly at: string;
}

export interface Insight {
  readonly text: string;
  readonly importance: number;
  /** How many items said it. */
  readonly support: number;
}

export interface ClusterOptions {
  /** Items at least this similar (Jaccard of stemmed content words) join a cluster. */
  readonly similarity?: number;
  readonly maxInsights?: number;
  /** A single item becomes an insight only when at least this important. */
  readonly singleImportance?: number;
}

interface Cluster {
  readonly words: Set<string>;
  readonly items: DistillItem[];
}

const MAX_TEXT = 400;

/** Greedy single pass, most important items first: each joins the most similar cluster above the threshold. */
export function cluster(items: readonly DistillItem[], similarity = 0.35): DistillItem[][] {
  const clusters: Cluster[] = [];
  const ordered = [...items].sort((a, b) => b.importance - a.importance || b.at.localeCompare(a.at));
  for (const item of ordered) {
    const words = contentWords(item.text);
    if (words.size === 0) continue;
    let best: Cluster | undefined;
    let bestScore = similarity;
    for (const c of clusters) {
      const score = jaccard(words, c.words);
      if (score >= bestScore) [best, bestScore] = [c, score];
    }
    if (best) best.items.push(item);
    else clusters.push({ words, items: [item] });
  }
  return clusters.map((c) => c.items);
}

/** A cluster's rank: its strongest item plus a bonus per recurrence. */
export function clusterScore(items: readonly DistillItem[]): number {
  return Math.max(...items.map((i) => i.importance)) + 0.2 * (items.length - 1);
}

/**
 * The no-model distillation: cluster lexically, keep clusters that recur or matter, rank them by importance
 * and recurrence; each insight is its cluster's most important (then newest) item.
 */
export function distillByClustering(items: readonly DistillItem[], options: ClusterOptions = {}): Insight[] {
  const single = options.singleImportance ?? 0.8;
  return cluster(items, options.similarity)
    .filter((c) => c.length >= 2 || c[0]!.importance >= single)
    .map((c) => ({ c, score: clusterScore(c) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, options.maxInsights ?? 10)
    .map(({ c }) => {
      const text = c[0]!.text.replace(/\s+/g, ' ').trim();
      return {
        text: text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`,
        importance: Math.min(1, Math.max(...c.map((i) => i.importance))),
        support: c.length,
      };
    });
}
