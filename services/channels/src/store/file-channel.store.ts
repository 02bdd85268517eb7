import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readIfExists, withLock, writeFileAtomic } from '#files';
import { safeSegment } from '#sessions';
import type { ChannelStore, ChatState, UpdateRecord } from './channel.store.js';

interface Stored<T> {
  readonly value: T;
  readonly expires?: number;
}

/**
 * The embedded shape's channel state: one JSON file per chat and per update under `<dataDir>/channels/<bot>/`,
 * written via temp file + fsync + rename. One process owns it, so the poller lease is always its own.
 */
export class FileChannelStore implements ChannelStore {
  private readonly root: string;
  private lastPrune = 0;

  constructor(dataDir: string, bot: string) {
    this.root = join(dataDir, 'channels', safeSegment(bot));
  }

  async getChat(chat: string): Promise<ChatState | undefined> {
    return (await this.read<ChatState>(this.chatPath(chat)))?.value;
  }

  updateChat(chat: string, change: (current: ChatState | undefined) => ChatState): Promise<ChatState> {
    const path = this.chatPath(chat);
    return withLock(path, async () => {
      const next = change((await this.read<ChatState>(path))?.value);
      await writeFileAtomic(path, JSON.stringify({ value: next }));
      return next;
    });
  }

  async getUpdate(updateId: number): Promise<UpdateRecord | undefined> {
    const stored = await this.read<UpdateRecord>(this.updatePath(updateId));
    if (!stored || (stored.expires !== undefined && stored.expires < Date.now())) return undefined;
    return stored.value;
  }

  async putUpdate(updateId: number, record: UpdateRecord, retentionMs: number): Promise<void> {
    const stored: Stored<UpdateRecord> = { value: record, ...(record.status === 'done' ? { expires: Date.now() + retentionMs } : {}) };
    await writeFileAtomic(this.updatePath(updateId), JSON.stringify(stored));
    if (Date.now() - this.lastPrune > 3_600_000) void this.prune(retentionMs);
  }

  async holdPoller(): Promise<boolean> {
    return true;
  }

  async releasePoller(): Promise<void> {}

  async close(): Promise<void> {}

  /** Forgets update records older than the retention (by file age: a record is never rewritten after `done`). */
  private async prune(retentionMs: number): Promise<void> {
    this.lastPrune = Date.now();
    const dir = join(this.root, 'updates');
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > retentionMs) await rm(path, { force: true });
    }
  }

  private chatPath(chat: string): string {
    return join(this.root, 'chats', `${safeSegment(chat)}.json`);
  }

  private updatePath(updateId: number): string {
    return join(this.root, 'updates', `${updateId}.json`);
  }

  private async read<T>(path: string): Promise<Stored<T> | undefined> {
    const text = await readIfExists(path);
    return text === undefined ? undefined : (JSON.parse(text) as Stored<T>);
  }
}
