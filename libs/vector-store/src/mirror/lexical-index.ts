import { BM25_B, BM25_K1, CONTEXT_WEIGHT, NEIGHBOUR_WINDOW, SITTING_GAP_MS, idf } from '#ranking';
import { analyse } from '#text';
import { grown } from './postings.js';
import { TopHeap } from './top-heap.js';

/** What the lexical index holds about one document. */
export interface LexicalDoc {
  readonly text: string;
  /**
   * Stored context (e.g. a conversation message's neighbours); such a document takes no neighbours from write order.
   */
  readonly context?: string;
  /** Write time (ms) placing a document without stored context among its neighbours; undefined: it has none. */
  readonly order?: number;
}

export interface LexicalQuery {
  readonly text: string;
  /** False for slots the caller's filter excludes. */
  readonly accept?: (slot: number) => boolean;
  /** Only scores at or above this count towards `total` and the top list. */
  readonly minScore: number;
  /** How many of the best to return. */
  readonly pool: number;
}

export interface LexicalResult {
  readonly top: Array<{ slot: number; score: number }>;
  /** Documents scoring above 0 and at least minScore. */
  readonly total: number;
  /** The score of any slot for this query (0 when it did not match); valid until the next search. */
  scoreOf(slot: number): number;
}

const W = NEIGHBOUR_WINDOW;
const NONE = -1;
const K1_PLUS_1 = BM25_K1 + 1;

export interface LexicalIndexOptions {
  /**
   * How many changed documents the index serves from its live per-document records before it rebuilds its
   * frozen postings (see LexicalIndex). Default: 1,024 plus 1/32 of the documents.
   */
  readonly staleLimit?: (docs: number) => number;
}

/**
 * An in-memory BM25F index over one scope's documents (see #ranking's lexical-score). Slots are assigned by
 * the caller.
 *
 * Live side, changed on every write: each document's analysed own text and stored context (term ids with
 * frequencies), and a write-order list of the documents without stored context, whose neighbours' words
 * count as their context.
 *
 * Search side, frozen: every document's combined field frequencies (own + ½ stored context + ½ neighbours'
 * own words) folded into slot-ordered postings, with each term's highest frequency and shortest document,
 * so a query reads one posting per (term, document) and never spreads neighbours at query time. A write
 * marks the documents whose combined field it changed (the document and its neighbours) as stale: search
 * skips their frozen postings and scores them from the live records instead, and rebuilds the frozen
 * postings once more than `staleLimit` documents are stale. Idf and the mean length are always the live ones.
 *
 * Query: document-at-a-time MaxScore (Turtle & Flood) over the frozen postings: terms with the smallest upper
 * bounds whose sum cannot lift a document into the best `pool` are only looked up (galloping) for documents
 * the others found, and a document is dropped as soon as what is left cannot lift it. The best `pool` are
 * exact (equal to scoring every document).
 */
export class LexicalIndex {
  private readonly termIds = new Map<string, number>();
  /** Documents whose own text or stored context holds the term. */
  private readonly df: number[] = [];
  private readonly terms: Array<{ own: TermCounts; ctx: TermCounts } | undefined> = [];
  private ownLen = new Float64Array(16);
  private ctxLen = new Float64Array(16);
  private effLen = new Float64Array(16);
  private order = new Float64Array(16);
  private prev = new Int32Array(16).fill(NONE);
  private next = new Int32Array(16).fill(NONE);
  /** Up to W neighbours before and W after each sequential slot, NONE-padded. */
  private nbrs = new Int32Array(16 * 2 * W).fill(NONE);
  private tail = NONE;
  private docs = 0;
  private effLenSum = 0;
  /** 1 for slots whose frozen postings are out of date (changed, removed or new since the last freeze). */
  private stale = new Uint8Array(16);
  private staleSlots: number[] = [];
  private frozen: Frozen = EMPTY_FROZEN;
  /** Scratch: a query term's index for each term id (-1 otherwise). */
  private queryPos = new Int32Array(16).fill(NONE);
  private readonly staleLimit: (docs: number) => number;
  /** Scratch of the query's window: accumulated essential scores and the offsets reached. */
  private readonly windowAcc = new Float64Array(WINDOW);
  private readonly windowHit = new Int32Array(WINDOW);
  private readonly reached = new Int32Array(1);

  constructor(options: LexicalIndexOptions = {}) {
    this.staleLimit = options.staleLimit ?? ((docs) => 1024 + (docs >> 5));
  }

  get size(): number {
    return this.docs;
  }

  /** Distinct terms this scope's index has seen (its vocabulary is its own: a map entry and a string each). */
  get vocabulary(): number {
    return this.df.length;
  }

  add(slot: number, doc: LexicalDoc): void {
    this.ensure(slot + 1);
    const own = this.count(analyse(doc.text));
    const ctx = doc.context ? this.count(analyse(doc.context)) : NO_TERMS;
    this.terms[slot] = { own, ctx };
    for (const id of own.ids) this.df[id]!++;
    for (const id of ctx.ids) if (!own.ids.includes(id)) this.df[id]!++;
    this.ownLen[slot] = own.length;
    this.ctxLen[slot] = ctx.length;
    this.docs++;
    this.markStale(slot);
    if (doc.order !== undefined && !doc.context) this.link(slot, doc.order);
    else this.setEffLen(slot, this.ownLen[slot]! + CONTEXT_WEIGHT * this.ctxLen[slot]!);
    this.refreshAround(slot);
  }

  remove(slot: number): void {
    const t = this.terms[slot];
    if (t === undefined) return;
    for (const id of t.own.ids) this.df[id]!--;
    for (const id of t.ctx.ids) if (!t.own.ids.includes(id)) this.df[id]!--;
    this.terms[slot] = undefined;
    this.docs--;
    this.markStale(slot);
    this.effLenSum -= this.effLen[slot]!;
    this.effLen[slot] = 0;
    const [before, after] = [this.prev[slot]!, this.next[slot]!];
    this.unlink(slot);
    for (const s of [before, after]) if (s !== NONE) this.refreshAround(s);
  }

  search(query: LexicalQuery): LexicalResult {
    if (this.staleSlots.length > this.staleLimit(this.docs)) this.freeze();
    const q = this.queryTerms(query.text);
    const n = q.ids.length;
    if (n === 0) return { top: [], total: 0, scoreOf: () => 0 };
    let bound = 0;
    for (let i = 0; i < n; i++) bound += q.idfs[i]! * K1_PLUS_1;
    const heap = new TopHeap(query.pool);
    // Raw scores are in fixed point (units of 1/SCALE): sums of integers are exact, so a document scores the same
    // whatever order its terms are added in (live records, essential or non-essential terms).
    const floor = query.minScore * bound * SCALE;
    const accept = query.accept;
    let total = 0;

    // Stale documents first, from the live records: their scores raise the threshold the frozen postings must beat.
    const scratch = new Float64Array(n);
    const queryPos = this.queryPos;
    for (let i = 0; i < n; i++) queryPos[q.ids[i]!] = i;
    try {
      for (const slot of this.staleSlots) {
        const raw = this.liveScore(slot, q, scratch);
        if (raw === 0 || raw < floor || (accept && !accept(slot))) continue;
        total++;
        heap.push(slot, raw);
      }
    } finally {
      for (let i = 0; i < n; i++) queryPos[q.ids[i]!] = NONE;
    }
    total += this.maxScore(q, heap, floor, accept);
    return {
      top: heap.sorted().map(({ slot, score }) => ({ slot, score: score / SCALE / bound })),
      total,
      scoreOf: (slot) => this.exactScore(slot, q, bound),
    };
  }

  /**
   * MaxScore over the frozen postings, a window of WINDOW slots at a time (as Lucene's MaxScore bulk scorer):
   * the essential terms are added term-at-a-time into the window's accumulators, then each document they
   * reached takes the non-essential terms (galloping lookups, best bound first) until what is left could not
   * lift it into the best `pool`. Pushes into `heap` (raw scores); returns how many fresh documents were found
   * at or above `floor` (all of them without pruning, a lower bound with it).
   */
  private maxScore(
    q: QueryTerms,
    heap: TopHeap,
    floor: number,
    accept: ((slot: number) => boolean) | undefined,
  ): number {
    const f = this.frozen;
    const n = q.ids.length;
    const { slots, tfs } = f;
    const { effLen, stale } = this;
    const { a, c } = this.lengthNorm();
    const pos = new Int32Array(n);
    const end = new Int32Array(n);
    const ub = new Float64Array(n);
    // A part computed with a smaller mean length can only be larger (c is larger): parts frozen at mean m0 bound
    // today's at mean m once scaled by max(1, m / m0) (the denominator shrinks by at most that factor).
    const drift = Math.max(1, this.meanLen() / f.meanLen) * BOUND_SLACK;
    let last = -1;
    for (let i = 0; i < n; i++) {
      const id = q.ids[i]!;
      if (id >= f.terms) continue;
      pos[i] = f.start[id]!;
      end[i] = f.start[id + 1]!;
      ub[i] = q.idfs[i]! * drift * f.termMax[id]! * SCALE + 1;
      if (end[i]! > pos[i]!) last = Math.max(last, slots[end[i]! - 1]!);
    }
    // Terms by upper bound, smallest first; cum[k]: what terms ord[0..k] could add together.
    const ord = Array.from({ length: n }, (_, i) => i).sort((x, y) => ub[x]! - ub[y]! || x - y);
    const cum = new Float64Array(n);
    for (let k = 0, sum = 0; k < n; k++) cum[k] = sum += ub[ord[k]!]!;
    let threshold = Math.max(heap.full ? heap.min : 0, floor);
    // ord[0..e-1] are non-essential: together they cannot reach the threshold.
    let e = 0;
    while (e < n && cum[e]! < threshold) e++;
    const acc = this.windowAcc;
    const hit = this.windowHit;
    let total = 0;
    for (let base = 0; base <= last && e < n; base += WINDOW) {
      const limit = base + WINDOW;
      const reached = this.reached;
      reached[0] = 0;
      for (let k = e; k < n; k++) {
        const i = ord[k]!;
        pos[i] = accumulate(
          slots,
          tfs,
          pos[i]!,
          end[i]!,
          limit,
          q.idfs[i]! * K1_PLUS_1,
          a,
          c,
          effLen,
          acc,
          hit,
          reached,
        );
      }
      let found = reached[0]!;
      if (found === 0) continue;
      // The documents reached, in slot order (the lookups only move forward): sorted when few, else scanned.
      if (found * 32 < WINDOW) insertionSort(hit, found);
      else {
        found = 0;
        for (let d = 0; d < WINDOW; d++) if (acc[d] !== 0) hit[found++] = d;
      }
      for (let j = 0; j < found; j++) {
        const d = hit[j]!;
        const doc = base + d;
        const essential = acc[d]!;
        acc[d] = 0;
        if (stale[doc]) continue;
        const score = complete(
          doc,
          essential,
          e,
          threshold,
          ord,
          cum,
          pos,
          end,
          slots,
          tfs,
          q.idfs,
          a + c * effLen[doc]!,
        );
        if (score < 0) {
          // Pruned: it cannot enter the best pool; its partial score still proves it is at or above floor.
          const partial = -score - 1;
          if (partial > 0 && partial >= floor && (!accept || accept(doc))) total++;
          continue;
        }
        if (score === 0 || score < floor || (accept && !accept(doc))) continue;
        total++;
        heap.push(doc, score);
        if (heap.full && heap.min > threshold) threshold = heap.min;
      }
      while (e < n && cum[e]! < threshold) e++;
    }
    return total;
  }

  /** A slot's raw score from the live records (0 for an empty slot); queryPos must map the query's term ids. */
  private liveScore(slot: number, q: QueryTerms, tf: Float64Array): number {
    const t = this.terms[slot];
    if (t === undefined) return 0;
    tf.fill(0);
    const queryPos = this.queryPos;
    const gather = (counts: TermCounts, weight: number) => {
      const { ids, tfs } = counts;
      for (let j = 0; j < ids.length; j++) {
        const i = queryPos[ids[j]!]!;
        if (i !== NONE) tf[i]! += weight * tfs[j]!;
      }
    };
    gather(t.own, 1);
    gather(t.ctx, CONTEXT_WEIGHT);
    for (let k = slot * 2 * W, end = k + 2 * W; k < end; k++) {
      const nb = this.nbrs[k]!;
      if (nb !== NONE) gather(this.terms[nb]!.own, CONTEXT_WEIGHT);
    }
    const { a, c } = this.lengthNorm();
    const norm = a + c * this.effLen[slot]!;
    let score = 0;
    for (let i = 0; i < q.ids.length; i++) {
      const x = tf[i]!;
      if (x > 0) score += part(q.idfs[i]! * K1_PLUS_1, x, norm);
    }
    return score;
  }

  /** A slot's normalised score for a query's terms, from the live records. */
  private exactScore(slot: number, q: QueryTerms, bound: number): number {
    if (bound === 0) return 0;
    const n = q.ids.length;
    for (let i = 0; i < n; i++) this.queryPos[q.ids[i]!] = i;
    try {
      return this.liveScore(slot, q, new Float64Array(n)) / SCALE / bound;
    } finally {
      for (let i = 0; i < n; i++) this.queryPos[q.ids[i]!] = NONE;
    }
  }

  /** BM25's length normalisation k1·(1 − b + b·len/avg) as a + c·len, with the live mean length. */
  private lengthNorm(): { a: number; c: number } {
    return { a: BM25_K1 * (1 - BM25_B), c: (BM25_K1 * BM25_B) / this.meanLen() };
  }

  private meanLen(): number {
    return this.effLenSum / Math.max(1, this.docs) || 1;
  }

  /** The query's distinct known terms with their idf, in a fixed order (by term id). */
  private queryTerms(text: string): QueryTerms {
    const ids: number[] = [];
    for (const t of analyse(text)) {
      const id = this.termIds.get(t);
      if (id !== undefined && this.df[id]! > 0 && !ids.includes(id)) ids.push(id);
    }
    ids.sort((x, y) => x - y);
    return { ids: Int32Array.from(ids), idfs: Float64Array.from(ids, (id) => idf(this.docs, this.df[id]!)) };
  }

  private markStale(slot: number): void {
    if (this.stale[slot]) return;
    this.stale[slot] = 1;
    this.staleSlots.push(slot);
  }

  /**
   * Rebuilds the frozen postings from the live records: two passes over the slots in order (count, then fill),
   * so every term's postings come out sorted by slot.
   */
  freeze(): void {
    const terms = this.df.length;
    const start = new Int32Array(terms + 1);
    const tf = new Float64Array(terms);
    const seen: number[] = [];
    const slotsEnd = this.terms.length;
    for (let s = 0; s < slotsEnd; s++) {
      if (!this.combined(s, tf, seen)) continue;
      for (const id of seen) {
        start[id + 1]!++;
        tf[id] = 0;
      }
    }
    for (let id = 0; id < terms; id++) start[id + 1]! += start[id]!;
    const slots = new Int32Array(start[terms]!);
    const tfs = new Float32Array(start[terms]!);
    const termMax = new Float64Array(terms);
    const { a, c } = this.lengthNorm();
    const fill = start.slice(0, terms);
    for (let s = 0; s < slotsEnd; s++) {
      if (!this.combined(s, tf, seen)) continue;
      const len = this.effLen[s]!;
      for (const id of seen) {
        const at = fill[id]!++;
        slots[at] = s;
        tfs[at] = tf[id]!;
        // Without idf (it changes with every write): the term's part of the score before weighting.
        const part = (tf[id]! * K1_PLUS_1) / (tf[id]! + a + c * len);
        if (part > termMax[id]!) termMax[id] = part;
        tf[id] = 0;
      }
    }
    this.frozen = { terms, start, slots, tfs, termMax, meanLen: this.meanLen() };
    for (const s of this.staleSlots) this.stale[s] = 0;
    this.staleSlots = [];
  }

  /**
   * A live slot's combined field frequencies into `tf` (by term id), its term ids into `seen`; false for an empty slot.
   */
  private combined(slot: number, tf: Float64Array, seen: number[]): boolean {
    seen.length = 0;
    const t = this.terms[slot];
    if (t === undefined) return false;
    const add = (counts: TermCounts, weight: number) => {
      for (let j = 0; j < counts.ids.length; j++) {
        const id = counts.ids[j]!;
        if (tf[id] === 0) seen.push(id);
        tf[id]! += weight * counts.tfs[j]!;
      }
    };
    add(t.own, 1);
    add(t.ctx, CONTEXT_WEIGHT);
    for (let k = slot * 2 * W, end = k + 2 * W; k < end; k++) {
      const nb = this.nbrs[k]!;
      if (nb !== NONE) add(this.terms[nb]!.own, CONTEXT_WEIGHT);
    }
    return true;
  }

  private count(terms: readonly string[]): TermCounts {
    const counts = new Map<number, number>();
    for (const t of terms) {
      let id = this.termIds.get(t);
      if (id === undefined) {
        id = this.df.length;
        this.termIds.set(t, id);
        this.df.push(0);
        if (this.queryPos.length <= id) this.queryPos = grown(this.queryPos, id + 1, NONE);
      }
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    // Filled by hand: TypedArray.from(iterator) is an order of magnitude slower.
    const ids = new Int32Array(counts.size);
    const tfs = new Float32Array(counts.size);
    let i = 0;
    for (const [id, n] of counts) {
      ids[i] = id;
      tfs[i++] = n;
    }
    return { ids, tfs, length: terms.length };
  }

  /** Inserts a sequential slot into the write-order list (almost always at the tail). */
  private link(slot: number, order: number): void {
    this.order[slot] = order;
    let after = this.tail;
    while (after !== NONE && this.order[after]! > order) after = this.prev[after]!;
    const before = after === NONE ? this.head() : this.next[after]!;
    this.prev[slot] = after;
    this.next[slot] = before;
    if (after !== NONE) this.next[after] = slot;
    if (before !== NONE) this.prev[before] = slot;
    else this.tail = slot;
  }

  private unlink(slot: number): void {
    const [p, n] = [this.prev[slot]!, this.next[slot]!];
    if (p !== NONE) this.next[p] = n;
    if (n !== NONE) this.prev[n] = p;
    if (this.tail === slot) this.tail = p;
    this.prev[slot] = NONE;
    this.next[slot] = NONE;
    this.nbrs.fill(NONE, slot * 2 * W, (slot + 1) * 2 * W);
  }

  /** The first slot of the write-order list (walked from the tail: only reached when inserting before everything). */
  private head(): number {
    let s = this.tail;
    while (s !== NONE && this.prev[s] !== NONE) s = this.prev[s]!;
    return s;
  }

  /** Recomputes neighbours and effective lengths of the sequential slots within W of `slot`. */
  private refreshAround(slot: number): void {
    if (this.terms[slot] === undefined || (this.prev[slot] === NONE && this.next[slot] === NONE && this.tail !== slot))
      return;
    const affected = [slot, ...this.walk(slot, this.prev, W, false), ...this.walk(slot, this.next, W, false)];
    for (const s of affected) {
      this.markStale(s);
      const before = this.walk(s, this.prev, W, true);
      const after = this.walk(s, this.next, W, true);
      const base = s * 2 * W;
      for (let k = 0; k < W; k++) {
        this.nbrs[base + k] = before[k] ?? NONE;
        this.nbrs[base + W + k] = after[k] ?? NONE;
      }
      const context = [...before, ...after].reduce((n, x) => n + this.ownLen[x]!, 0);
      this.setEffLen(s, this.ownLen[s]! + CONTEXT_WEIGHT * context);
    }
  }

  /** Up to n slots from `slot` along `link`; with `sitting`, stopping at a gap longer than SITTING_GAP_MS. */
  private walk(slot: number, link: Int32Array, n: number, sitting: boolean): number[] {
    const out: number[] = [];
    for (let s = slot, k = 0; k < n; k++) {
      const t = link[s]!;
      if (t === NONE || (sitting && Math.abs(this.order[t]! - this.order[s]!) > SITTING_GAP_MS)) break;
      out.push(t);
      s = t;
    }
    return out;
  }

  private setEffLen(slot: number, len: number): void {
    this.effLenSum += len - this.effLen[slot]!;
    this.effLen[slot] = len;
  }

  private ensure(n: number): void {
    if (n <= this.ownLen.length) return;
    this.ownLen = grown(this.ownLen, n);
    this.ctxLen = grown(this.ctxLen, this.ownLen.length);
    this.effLen = grown(this.effLen, this.ownLen.length);
    this.order = grown(this.order, this.ownLen.length);
    this.prev = grown(this.prev, this.ownLen.length, NONE);
    this.next = grown(this.next, this.ownLen.length, NONE);
    this.nbrs = grown(this.nbrs, this.ownLen.length * 2 * W, NONE);
    this.stale = grown(this.stale, this.ownLen.length);
  }
}

/** A document's distinct term ids with their frequencies, and its length in terms. */
interface TermCounts {
  readonly ids: Int32Array;
  readonly tfs: Float32Array;
  readonly length: number;
}

const NO_TERMS: TermCounts = { ids: new Int32Array(0), tfs: new Float32Array(0), length: 0 };

/** A query's distinct terms (ids ascending) and their idfs. */
interface QueryTerms {
  readonly ids: Int32Array;
  readonly idfs: Float64Array;
}

/**
 * Frozen postings: term `id`'s documents are slots[start[id] .. start[id + 1]), ascending, with their combined
 * frequencies.
 */
interface Frozen {
  /** Terms known at the freeze (later ones have no frozen postings). */
  readonly terms: number;
  readonly start: Int32Array;
  readonly slots: Int32Array;
  readonly tfs: Float32Array;
  /** Each term's highest combined frequency and shortest effective length among its documents: its upper bound. */
  /** The highest idf-less part of each term. */
  readonly termMax: Float64Array;
  /** The mean effective length the parts were computed with. */
  readonly meanLen: number;
}

const EMPTY_FROZEN: Frozen = {
  terms: 0,
  start: new Int32Array(1),
  slots: new Int32Array(0),
  tfs: new Float32Array(0),
  termMax: new Float64Array(0),
  meanLen: 1,
};

/** Slots per window of the query's term-at-a-time phase. */
const WINDOW = 4096;
/**
 * Fixed point of raw scores: 2^40 units per score point; sums stay exact up to 2^53, a raw score of 8,192 (a few
 * hundred query terms).
 */
const SCALE = 2 ** 40;

/**
 * Bounds are raised by this share: a bound computed in another order of operations must not fall below a score by
 * rounding.
 */
const BOUND_SLACK = 1 + 1e-9;

/** One term's part of a raw score in fixed point: w = idf · (k1 + 1), norm = k1 · (1 − b + b · len / avg). */
function part(w: number, tf: number, norm: number): number {
  return Math.round(((w * tf) / (tf + norm)) * SCALE);
}

/**
 * Adds one term's postings from `p` up to the window's `limit` slot into the window's accumulators (offsets
 * first reached go to `hit`, their count in reached[0]); returns the position reached. Kept small and
 * monomorphic so that it compiles to a tight loop without boxed numbers.
 */
function accumulate(
  slots: Int32Array,
  tfs: Float32Array,
  p: number,
  stop: number,
  limit: number,
  w: number,
  a: number,
  c: number,
  effLen: Float64Array,
  acc: Float64Array,
  hit: Int32Array,
  reached: Int32Array,
): number {
  const base = limit - WINDOW;
  let found = reached[0]!;
  for (; p < stop; p++) {
    const slot = slots[p]!;
    if (slot >= limit) break;
    const d = slot - base;
    if (acc[d] === 0) hit[found++] = d;
    // part() written out: a call returning a non-integer number boxes it on some tiers, one allocation per posting.
    const tf = tfs[p]!;
    acc[d]! += Math.round(((w * tf) / (tf + a + c * effLen[slot]!)) * SCALE);
  }
  reached[0] = found;
  return p;
}

/**
 * Adds the non-essential terms ord[e-1] .. ord[0] (largest bound first) to a document's essential score, moving
 * their cursors to it; stops once what is left cannot reach the threshold. Returns the full score, or
 * −(partial score) − 1 when it stopped early.
 */
function complete(
  doc: number,
  score: number,
  e: number,
  threshold: number,
  ord: readonly number[],
  cum: Float64Array,
  pos: Int32Array,
  end: Int32Array,
  slots: Int32Array,
  tfs: Float32Array,
  idfs: Float64Array,
  norm: number,
): number {
  for (let k = e - 1; k >= 0; k--) {
    if (score + cum[k]! < threshold) return -score - 1;
    const i = ord[k]!;
    const p = (pos[i] = seek(slots, pos[i]!, end[i]!, doc));
    if (p < end[i]! && slots[p] === doc) score += part(idfs[i]! * K1_PLUS_1, tfs[p]!, norm);
  }
  return score;
}

/** Sorts xs[0, n) in place (n is small; TypedArray#sort would copy into a fresh array on every call). */
function insertionSort(xs: Int32Array, n: number): void {
  for (let i = 1; i < n; i++) {
    const x = xs[i]!;
    let j = i - 1;
    while (j >= 0 && xs[j]! > x) {
      xs[j + 1] = xs[j]!;
      j--;
    }
    xs[j + 1] = x;
  }
}

/** The first position in slots[from, end) holding a slot ≥ target (galloping, then binary search). */
function seek(slots: Int32Array, from: number, end: number, target: number): number {
  if (from >= end || slots[from]! >= target) return from;
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < end && slots[hi]! < target) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > end) hi = end;
  // slots[lo] < target; the answer is in (lo, hi].
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if (slots[mid]! < target) lo = mid;
    else hi = mid;
  }
  return hi;
}
