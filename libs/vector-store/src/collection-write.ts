import type { Doc, DocScope, FieldValue } from './vector-store.js';

/** One write to a collection, as data: what a write-ahead log carries and replays. */
export type CollectionWrite =
  | { readonly kind: 'insert' | 'upsert'; readonly docs: readonly Doc[] }
  | { readonly kind: 'delete'; readonly scope: DocScope; readonly ids: readonly string[] };

/** A write checked against the collection and encoded for a log; `apply` makes it visible once the log holds it. */
export interface PreparedWrite {
  readonly target: string;
  readonly data: EncodedWrite;
  apply(): void;
}

/**
 * Writes made durable by the caller's log (a write-ahead log the caller fsyncs) instead of by a table commit each:
 * applied at once to what reads see, persisted to the table by a background flush, replayed from the log after a
 * crash. A store offers it when it can serve reads from memory between flushes (the embedded store).
 */
export interface JournaledWrites {
  /** The collection's name: the log's records name the target they replay into. */
  readonly name: string;
  /** Validates and encodes a write; nothing is visible until `apply`. */
  prepare(write: CollectionWrite): PreparedWrite;
  /**
   * Applies an encoded write from the log (after a crash): inserts are replayed as upserts, so replays are idempotent.
   */
  replay(data: unknown): void;
  /** Persists everything applied so far to the table. */
  flush(): Promise<void>;
}

interface EncodedDoc {
  readonly id: string;
  readonly tenant: string;
  readonly agent: string;
  readonly text: string;
  readonly context?: string;
  /** The vector's float32 bytes, base64 (a quarter of the size of JSON numbers, and exact). */
  readonly vector: string;
  readonly fields: Readonly<Record<string, FieldValue>>;
}

export type EncodedWrite =
  | { readonly kind: 'insert' | 'upsert'; readonly docs: readonly EncodedDoc[] }
  | { readonly kind: 'delete'; readonly scope: DocScope; readonly ids: readonly string[] };

export function encodeWrite(write: CollectionWrite): EncodedWrite {
  if (write.kind === 'delete')
    return { kind: 'delete', scope: { tenant: write.scope.tenant, agent: write.scope.agent }, ids: [...write.ids] };
  return {
    kind: write.kind,
    docs: write.docs.map((d) => ({
      id: d.id,
      tenant: d.tenant,
      agent: d.agent,
      text: d.text,
      ...(d.context ? { context: d.context } : {}),
      vector: Buffer.from(d.vector.buffer, d.vector.byteOffset, d.vector.byteLength).toString('base64'),
      fields: d.fields,
    })),
  };
}

export function decodeWrite(data: unknown): CollectionWrite {
  const w = data as EncodedWrite;
  if (w.kind === 'delete') return w;
  return {
    kind: w.kind,
    docs: w.docs.map((d) => {
      const bytes = Buffer.from(d.vector, 'base64');
      // A copy: the decoded buffer may be a view into a shared pool whose offset is not 4-byte aligned.
      const vector = new Float32Array(bytes.byteLength / 4);
      new Uint8Array(vector.buffer).set(bytes);
      return { ...d, vector };
    }),
  };
}
