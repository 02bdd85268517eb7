import { CONTEXT_WEIGHT, NEIGHBOUR_WINDOW, SITTING_GAP_MS, idf, termScore, upperBound } from '#ranking';
import { analyse } from '#text';
import { grown, Postings } from './postings.js';
import { TopHeap } from './top-heap.js';

/** What the lexical index holds about one document. */
export interface LexicalDoc {
  readonly text: string;
  /** Stored context (e.g. a conversation message's neighbours); such a document takes no neighbours from write order. */
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

/**
 * An in-memory BM25F index over one scope's documents (see #ranking's lexical-score): postings of the
 * analysed own text and stored context, and a write-order list of the documents without stored context,
 * whose neighbours' words are spread to them at query time. Slots are assigned by the caller.
 */
export class LexicalIndex {
  private readonly termIds = new Map<string, number>();
  private readonly own: Postings[] = [];
  private readonly ctx: Postings[] = [];
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
  private acc = new Float64Array(16);
  private lastTouched: number[] = [];
  private tf = new Float64Array(16);
  /** Scratch: slots one term reached (a slot at most once per term). */
  private seen = new Int32Array(16);

  get size(): number {
    return this.docs;
  }

  add(slot: number, doc: LexicalDoc): void {
    this.ensure(slot + 1);
    const own = this.count(analyse(doc.text));
    const ctx = doc.context ? this.count(analyse(doc.context)) : NO_TERMS;
    this.terms[slot] = { own, ctx };
    for (const id of own.ids) this.df[id]!++;
    for (const id of ctx.ids) if (!own.ids.includes(id)) this.df[id]!++;
    for (let i = 0; i < own.ids.length; i++) this.own[own.ids[i]!]!.add(slot, own.tfs[i]!);
    for (let i = 0; i < ctx.ids.length; i++) this.ctx[ctx.ids[i]!]!.add(slot, ctx.tfs[i]!);
    this.ownLen[slot] = own.length;
    this.ctxLen[slot] = ctx.length;
    this.docs++;
    if (doc.order !== undefined && !doc.context) this.link(slot, doc.order);
    else this.setEffLen(slot, this.ownLen[slot]! + CONTEXT_WEIGHT * this.ctxLen[slot]!);
    this.refreshAround(slot);
  }

  remove(slot: number): void {
    const t = this.terms[slot];
    if (t === undefined) return;
    for (const id of t.own.ids) this.df[id]!--;
    for (const id of t.ctx.ids) if (!t.own.ids.includes(id)) this.df[id]!--;
    for (const id of t.own.ids) this.own[id]!.remove(slot);
    for (const id of t.ctx.ids) this.ctx[id]!.remove(slot);
    this.terms[slot] = undefined;
    this.docs--;
    this.effLenSum -= this.effLen[slot]!;
    this.effLen[slot] = 0;
    const [before, after] = [this.prev[slot]!, this.next[slot]!];
    this.unlink(slot);
    for (const s of [before, after]) if (s !== NONE) this.refreshAround(s);
  }

  /**
   * Term-at-a-time scoring with MaxScore pruning (Turtle & Flood): terms go rarest first; once the terms left
   * could not lift an unseen document into the best `pool` (their upper bounds sum below the pool's
   * threshold), they are scored only for the documents that could still get there. So common words cost
   * little, and the best `pool` are exact. `total` counts every document scored at or above minScore: exact
   * without pruning, a lower bound with it (the old store's count was bounded by its candidate pool).
   */
  search(query: LexicalQuery): LexicalResult {
    const terms = [...new Set(analyse(query.text))]
      .flatMap((t) => {
        const id = this.termIds.get(t);
        return id !== undefined && this.df[id]! > 0 ? [{ id, idf: idf(this.docs, this.df[id]!) }] : [];
      })
      .sort((a, b) => b.idf - a.idf);
    const bound = upperBound(terms.map((t) => t.idf));
    const acc = this.acc;
    for (const slot of this.lastTouched) acc[slot] = 0;
    const touched: number[] = [];
    this.lastTouched = touched;
    const left = terms.map((_, i) => upperBound(terms.slice(i).map((t) => t.idf)));
    let threshold = 0;
    let best = 0;
    let i = 0;
    for (; i < terms.length && (i === 0 || left[i]! >= threshold); i++) {
      best = Math.max(best, this.scoreTerm(terms[i]!.id, terms[i]!.idf, touched));
      // The pool's threshold can only stop the loop once the best score reaches what the next terms could add.
      if (i + 1 < terms.length && best >= left[i + 1]!) threshold = this.kthBest(touched, query.pool, query.accept);
    }
    if (i < terms.length) this.finish(terms.slice(i), left[i]!, threshold, touched, query.accept);
    const heap = new TopHeap(query.pool);
    const floor = query.minScore * bound;
    let total = 0;
    for (const slot of touched) {
      const raw = acc[slot]!;
      if (raw < floor || raw === 0 || (query.accept && !query.accept(slot))) continue;
      total++;
      heap.push(slot, raw / bound);
    }
    const exact = (slot: number) => (bound > 0 ? terms.reduce((sum, t) => sum + this.contribution(slot, t.id, t.idf), 0) / bound : 0);
    return { top: heap.sorted(), total, scoreOf: exact };
  }

  /**
   * Scores the remaining terms for the slots that could still reach the threshold: by lookups when those are
   * few, else by walking the terms' postings like the first phase (cheaper when nearly every slot could).
   */
  private finish(rest: ReadonlyArray<{ id: number; idf: number }>, left: number, threshold: number, touched: number[], accept?: (slot: number) => boolean): void {
    const candidates = touched.filter((slot) => this.acc[slot]! + left >= threshold && (!accept || accept(slot)));
    const postings = rest.reduce((n, t) => n + this.own[t.id]!.size + this.ctx[t.id]!.size, 0);
    if (candidates.length * rest.length > postings) {
      for (const t of rest) this.scoreTerm(t.id, t.idf, touched);
      return;
    }
    for (const slot of candidates) for (const t of rest) this.acc[slot]! += this.contribution(slot, t.id, t.idf);
  }

  /** The pool-th best accumulated score among accepted slots (0 while fewer have a score). */
  private kthBest(touched: readonly number[], k: number, accept?: (slot: number) => boolean): number {
    if (touched.length < k) return 0;
    const heap = new TopHeap(k);
    for (const slot of touched) if (!accept || accept(slot)) heap.push(slot, this.acc[slot]!);
    return heap.full ? heap.min : 0;
  }

  /** One term's BM25F contribution to one slot, from its own, its stored context's and its neighbours' frequencies. */
  private contribution(slot: number, id: number, termIdf: number): number {
    const t = this.terms[slot];
    if (t === undefined) return 0;
    let tf = frequency(t.own, id) + CONTEXT_WEIGHT * frequency(t.ctx, id);
    for (let k = slot * 2 * W, end = k + 2 * W; k < end; k++) {
      const nb = this.nbrs[k]!;
      if (nb !== NONE) tf += CONTEXT_WEIGHT * frequency(this.terms[nb]!.own, id);
    }
    if (tf === 0) return 0;
    const avg = this.effLenSum / Math.max(1, this.docs) || 1;
    return termIdf * termScore(tf, this.effLen[slot]! / avg);
  }

  /** Adds one term's BM25F contribution to the accumulators (`touched` collects slots seen for the first time); returns the best accumulated score it reached. */
  private scoreTerm(id: number, termIdf: number, touched: number[]): number {
    const { tf, nbrs, acc, effLen } = this;
    const seen = this.seen;
    let n = 0;
    const own = this.own[id]!;
    for (let i = 0; i < own.size; i++) {
      const slot = own.slots[i]!;
      const w = own.weights[i]!;
      if (tf[slot] === 0) seen[n++] = slot;
      tf[slot]! += w;
      const cw = CONTEXT_WEIGHT * w;
      for (let k = slot * 2 * W, end = k + 2 * W; k < end; k++) {
        const nb = nbrs[k]!;
        if (nb === NONE) continue;
        if (tf[nb] === 0) seen[n++] = nb;
        tf[nb]! += cw;
      }
    }
    const ctx = this.ctx[id]!;
    for (let i = 0; i < ctx.size; i++) {
      const slot = ctx.slots[i]!;
      if (tf[slot] === 0) seen[n++] = slot;
      tf[slot]! += CONTEXT_WEIGHT * ctx.weights[i]!;
    }
    const avg = this.effLenSum / Math.max(1, this.docs) || 1;
    let best = 0;
    for (let i = 0; i < n; i++) {
      const slot = seen[i]!;
      if (acc[slot] === 0) touched.push(slot);
      const a = (acc[slot]! += termIdf * termScore(tf[slot]!, effLen[slot]! / avg));
      if (a > best) best = a;
      tf[slot] = 0;
    }
    return best;
  }

  private count(terms: readonly string[]): TermCounts {
    const counts = new Map<number, number>();
    for (const t of terms) {
      let id = this.termIds.get(t);
      if (id === undefined) {
        id = this.own.length;
        this.termIds.set(t, id);
        this.own.push(new Postings());
        this.ctx.push(new Postings());
        this.df.push(0);
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
    if (this.terms[slot] === undefined || (this.prev[slot] === NONE && this.next[slot] === NONE && this.tail !== slot)) return;
    const affected = [slot, ...this.walk(slot, this.prev, W, false), ...this.walk(slot, this.next, W, false)];
    for (const s of affected) {
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
    this.acc = grown(this.acc, this.ownLen.length);
    this.tf = grown(this.tf, this.ownLen.length);
    this.seen = grown(this.seen, this.ownLen.length);
  }
}

/** A document's distinct term ids with their frequencies, and its length in terms. */
interface TermCounts {
  readonly ids: Int32Array;
  readonly tfs: Float32Array;
  readonly length: number;
}

const NO_TERMS: TermCounts = { ids: new Int32Array(0), tfs: new Float32Array(0), length: 0 };

function frequency(counts: TermCounts, id: number): number {
  const at = counts.ids.indexOf(id);
  return at < 0 ? 0 : counts.tfs[at]!;
}
