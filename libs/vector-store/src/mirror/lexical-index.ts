import { CONTEXT_WEIGHT, NEIGHBOUR_WINDOW, SITTING_GAP_MS, idf, termScore, upperBound } from '#ranking';
import { analyse } from '#text';
import { grown, Postings } from './postings.js';

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
  private readonly terms: Array<{ own: Map<number, number>; ctx: Map<number, number> } | undefined> = [];
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

  get size(): number {
    return this.docs;
  }

  add(slot: number, doc: LexicalDoc): void {
    this.ensure(slot + 1);
    const own = this.count(analyse(doc.text));
    const ctx = this.count(doc.context ? analyse(doc.context) : []);
    this.terms[slot] = { own, ctx };
    for (const id of new Set([...own.keys(), ...ctx.keys()])) this.df[id]!++;
    for (const [id, n] of own) this.own[id]!.add(slot, n);
    for (const [id, n] of ctx) this.ctx[id]!.add(slot, n);
    this.ownLen[slot] = sum(own);
    this.ctxLen[slot] = sum(ctx);
    this.docs++;
    if (doc.order !== undefined && !doc.context) this.link(slot, doc.order);
    else this.setEffLen(slot, this.ownLen[slot]! + CONTEXT_WEIGHT * this.ctxLen[slot]!);
    this.refreshAround(slot);
  }

  remove(slot: number): void {
    const t = this.terms[slot];
    if (t === undefined) return;
    for (const id of new Set([...t.own.keys(), ...t.ctx.keys()])) this.df[id]!--;
    for (const id of t.own.keys()) this.own[id]!.remove(slot);
    for (const id of t.ctx.keys()) this.ctx[id]!.remove(slot);
    this.terms[slot] = undefined;
    this.docs--;
    this.effLenSum -= this.effLen[slot]!;
    this.effLen[slot] = 0;
    const [before, after] = [this.prev[slot]!, this.next[slot]!];
    this.unlink(slot);
    for (const s of [before, after]) if (s !== NONE) this.refreshAround(s);
  }

  search(query: LexicalQuery): LexicalResult {
    const ids = [...new Set(analyse(query.text))].flatMap((t) => {
      const id = this.termIds.get(t);
      return id !== undefined && this.df[id]! > 0 ? [id] : [];
    });
    const idfs = ids.map((id) => idf(this.docs, this.df[id]!));
    const bound = upperBound(idfs);
    const acc = this.acc;
    for (const slot of this.lastTouched) acc[slot] = 0;
    const touched: number[] = [];
    this.lastTouched = touched;
    for (let i = 0; i < ids.length; i++) this.scoreTerm(ids[i]!, idfs[i]!, touched);
    const heap = new TopHeap(query.pool);
    let total = 0;
    for (const slot of touched) {
      const score = acc[slot]! / bound;
      if (score < query.minScore || (query.accept && !query.accept(slot))) continue;
      total++;
      heap.push(slot, score);
    }
    // The accumulators stay as they are until the next search, which clears them: scoreOf reads them.
    return { top: heap.sorted(), total, scoreOf: (slot) => (bound > 0 && this.lastTouched === touched && slot < acc.length ? acc[slot]! / bound : 0) };
  }

  /** Adds one term's BM25F contribution to the accumulators; `touched` collects slots seen for the first time. */
  private scoreTerm(id: number, termIdf: number, touched: number[]): void {
    const tf = this.tf;
    const seen: number[] = [];
    const bump = (slot: number, w: number) => {
      if (tf[slot] === 0) seen.push(slot);
      tf[slot]! += w;
    };
    const own = this.own[id]!;
    for (let i = 0; i < own.size; i++) {
      const slot = own.slots[i]!;
      const w = own.weights[i]!;
      bump(slot, w);
      const base = slot * 2 * W;
      for (let k = 0; k < 2 * W; k++) {
        const n = this.nbrs[base + k]!;
        if (n !== NONE) bump(n, CONTEXT_WEIGHT * w);
      }
    }
    const ctx = this.ctx[id]!;
    for (let i = 0; i < ctx.size; i++) bump(ctx.slots[i]!, CONTEXT_WEIGHT * ctx.weights[i]!);
    const avg = this.effLenSum / Math.max(1, this.docs) || 1;
    for (const slot of seen) {
      if (this.acc[slot] === 0) touched.push(slot);
      this.acc[slot]! += termIdf * termScore(tf[slot]!, this.effLen[slot]! / avg);
      tf[slot] = 0;
    }
  }

  private count(terms: readonly string[]): Map<number, number> {
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
    return counts;
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
  }
}

function sum(counts: Map<number, number>): number {
  let n = 0;
  for (const v of counts.values()) n += v;
  return n;
}

/** A bounded min-heap keeping the `capacity` best (slot, score) pairs; ties favour the lower slot. */
class TopHeap {
  private readonly items: Array<{ slot: number; score: number }> = [];
  constructor(private readonly capacity: number) {}

  push(slot: number, score: number): void {
    const item = { slot, score };
    if (this.items.length < this.capacity) {
      this.items.push(item);
      this.up(this.items.length - 1);
    } else if (this.capacity > 0 && worse(this.items[0]!, item)) {
      this.items[0] = item;
      this.down(0);
    }
  }

  sorted(): Array<{ slot: number; score: number }> {
    return [...this.items].sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
  }

  private up(i: number): void {
    const h = this.items;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!worse(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && worse(h[l]!, h[m]!)) m = l;
      if (r < h.length && worse(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

const worse = (a: { slot: number; score: number }, b: { slot: number; score: number }) => a.score < b.score || (a.score === b.score && a.slot > b.slot);
