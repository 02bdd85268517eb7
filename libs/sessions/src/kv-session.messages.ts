import { randomUUID } from 'node:crypto';
import type { Scope, SessionMessage } from '#contracts';
import type { KvStore } from '#kv';
import { chunkKey, chunkPrefix } from './kv-session.keys.js';

/** Chunks beyond this many are merged into one by the next append (a read then costs a few keys, not hundreds). */
export const MERGE_AT = 32;

/**
 * A session's messages as chunks of the key-value port: each append writes its messages as a new chunk (written
 * once, never changed) before the session's record names it, so an append costs the size of what it adds, not of the
 * session. The record's list of chunk ids is the truth; a chunk it does not name (an append that lost its session,
 * or a crash before the record moved) is never read, and goes with the session.
 */
export class SessionMessages {
  constructor(private readonly kv: KvStore) {}

  /** Stores messages as a new chunk; returns its id. */
  async write(scope: Scope, id: string, messages: readonly SessionMessage[]): Promise<string> {
    const chunk = randomUUID().replaceAll('-', '');
    await this.kv.put(chunkKey(scope, id, chunk), JSON.stringify(messages));
    return chunk;
  }

  /**
   * The messages of `chunks`, in order; undefined when one is gone (a compaction replaced it: read the record again).
   */
  async read(scope: Scope, id: string, chunks: readonly string[]): Promise<SessionMessage[] | undefined> {
    if (chunks.length === 0) return [];
    const stored = new Map((await this.kv.list(chunkPrefix(scope, id))).map((e) => [e.key, e.value]));
    const texts = chunks.map((c) => stored.get(chunkKey(scope, id, c)));
    if (texts.some((t) => t === undefined)) return undefined;
    return texts.flatMap((t) => JSON.parse(t!) as SessionMessage[]);
  }

  /** Removes chunks no record names any more (replaced, merged, or never committed). */
  async drop(scope: Scope, id: string, chunks: readonly string[]): Promise<void> {
    await Promise.all(chunks.map((c) => this.kv.delete(chunkKey(scope, id, c)).catch(() => false)));
  }

  /** Removes every chunk of the session (its deletion). */
  async dropAll(scope: Scope, id: string): Promise<void> {
    await Promise.all(
      (await this.kv.keys(chunkPrefix(scope, id))).map((key) => this.kv.delete(key).catch(() => false)),
    );
  }
}
