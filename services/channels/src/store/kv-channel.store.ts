import { isKvConflict, keyToken, type KvStore } from '#kv';
import type { ChannelStore, ChatState, UpdateRecord } from './channel.store.js';

/** An update record with the time it is forgotten at (its retention; the bucket's TTL is only the upper bound). */
type StoredUpdate = UpdateRecord & { readonly expiresAt: number };
interface PollerLease {
  readonly owner: string;
  readonly expiresAt: number;
}

const MAX_ATTEMPTS = 50;

/** The channel keys of one bot: its chats, handled updates and poller lease. */
export const channelKeys = (bot: string) => {
  const base = keyToken(bot);
  return {
    chat: (chat: string) => `${base}.chat.${keyToken(chat)}`,
    update: (updateId: number) => `${base}.update.${updateId}`,
    poller: `${base}.poller`,
  };
};

/**
 * The channels service's state on the key-value port (Redis distributed, files embedded): a chat is changed by
 * compare-and-set, retried when another instance changed it first, so no change is lost. The poller lease lives in
 * `leases` (the same Redis distributed; the process's memory embedded, where a restart must not wait out the lease
 * its previous process left behind).
 */
export class KvChannelStore implements ChannelStore {
  private readonly keys: ReturnType<typeof channelKeys>;

  constructor(
    private readonly kv: KvStore,
    private readonly leases: KvStore,
    bot: string,
  ) {
    this.keys = channelKeys(bot);
  }

  async getChat(chat: string): Promise<ChatState | undefined> {
    const entry = await this.kv.get(this.keys.chat(chat));
    return entry && (JSON.parse(entry.value) as ChatState);
  }

  async updateChat(chat: string, change: (current: ChatState | undefined) => ChatState): Promise<ChatState> {
    const key = this.keys.chat(chat);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const entry = await this.kv.get(key);
      const next = change(entry && (JSON.parse(entry.value) as ChatState));
      try {
        await this.kv.put(key, JSON.stringify(next), { expected: entry?.revision ?? 0 });
        return next;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new Error(`chat ${chat} changed ${MAX_ATTEMPTS} times while being updated`);
  }

  async getUpdate(updateId: number): Promise<UpdateRecord | undefined> {
    const entry = await this.kv.get(this.keys.update(updateId));
    const stored = entry && (JSON.parse(entry.value) as StoredUpdate);
    if (!stored || stored.expiresAt <= Date.now()) return undefined;
    const { expiresAt: _expires, ...record } = stored;
    return record;
  }

  async putUpdate(updateId: number, record: UpdateRecord, retentionMs: number): Promise<void> {
    await this.kv.put(this.keys.update(updateId), JSON.stringify({ ...record, expiresAt: Date.now() + retentionMs }));
  }

  async holdPoller(owner: string, ttlMs: number): Promise<boolean> {
    const entry = await this.leases.get(this.keys.poller);
    const held = entry && (JSON.parse(entry.value) as PollerLease);
    if (held && held.owner !== owner && held.expiresAt > Date.now()) return false;
    try {
      await this.leases.put(this.keys.poller, JSON.stringify({ owner, expiresAt: Date.now() + ttlMs }), {
        expected: entry?.revision ?? 0,
      });
      return true;
    } catch (err) {
      // Another instance took or renewed it at the same moment: it is theirs.
      if (isKvConflict(err)) return false;
      throw err;
    }
  }

  async releasePoller(owner: string): Promise<void> {
    const entry = await this.leases.get(this.keys.poller);
    if (!entry || (JSON.parse(entry.value) as PollerLease).owner !== owner) return;
    await this.leases
      .delete(this.keys.poller, { expected: entry.revision })
      .catch((err: unknown) => (isKvConflict(err) ? undefined : Promise.reject(err)));
  }

  async close(): Promise<void> {
    await this.kv.close();
    if (this.leases !== this.kv) await this.leases.close();
  }
}
