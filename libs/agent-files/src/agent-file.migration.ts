import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { agentFileName, AgentFileKind, type AgentFileHistoryEntry } from '#contracts';
import { putIfAbsent, type KvStore } from '#kv';
import { contentKey, indexKey } from './kv-agent-file.store.js';

/** Stores one file's versions (contents first, then the index that names them). */
async function adopt(
  kv: KvStore,
  scope: { tenant: string; agent: string },
  file: AgentFileKind,
  versions: Array<{ entry: AgentFileHistoryEntry; content: string }>,
): Promise<void> {
  const sorted = versions.sort((a, b) => a.entry.version - b.entry.version);
  for (const { entry, content } of sorted) await kv.put(contentKey(scope, file, entry), content);
  await putIfAbsent(kv, indexKey(scope, file), JSON.stringify(sorted.map((v) => v.entry)));
}

const glob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Moves the agent files an earlier version kept in Redis (per file a head hash and hashes of contents and history
 * entries) into the bucket, deleting the old keys once stored: an interrupted move is finished by the next start, and a
 * file written since by this version keeps its newer history. Returns how many files were moved.
 */
export async function moveRedisAgentFiles(redis: Redis, prefix: string, kv: KvStore): Promise<number> {
  const head = `${prefix}agent-file:{`;
  let moved = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${glob(head)}*}:head`, 'COUNT', 200);
    cursor = next;
    for (const key of keys) {
      const match = /^([^:]*):([^:]*):([a-z]+)\}:head$/.exec(key.slice(head.length));
      if (!match || !AgentFileKind.safeParse(match[3]).success) continue;
      const [, segment, agent, kind] = match as unknown as [string, string, string, AgentFileKind];
      const base = key.slice(0, -':head'.length);
      const [contents, metas] = await Promise.all([redis.hgetall(`${base}:contents`), redis.hgetall(`${base}:meta`)]);
      const versions = Object.entries(metas).flatMap(([version, json]) => {
        const content = contents[version];
        return content === undefined
          ? []
          : [{ entry: { version: Number(version), ...JSON.parse(json) } as AgentFileHistoryEntry, content }];
      });
      await adopt(kv, { tenant: decodeURIComponent(segment), agent }, kind, versions);
      await redis.del(key, `${base}:contents`, `${base}:meta`);
      moved++;
    }
  } while (cursor !== '0');
  return moved;
}

const list = (dir: string) =>
  readdir(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? ([] as string[]) : Promise.reject(err)));

/**
 * Moves the agent files an earlier embedded version kept under `<dataDir>/agents/<tenant>/<agent>/` (the current text,
 * and `history/<FILE>/` with one file per version and an index) into the bucket, then removes that folder.
 */
export async function moveFileAgentFiles(dataDir: string, kv: KvStore): Promise<number> {
  const root = join(dataDir, 'agents');
  let moved = 0;
  for (const segment of await list(root)) {
    for (const agent of await list(join(root, segment))) {
      const scope = { tenant: decodeURIComponent(segment), agent };
      for (const file of AgentFileKind.options) {
        const dir = join(root, segment, agent, 'history', agentFileName[file].replace(/\.md$/, ''));
        const index = await readFile(join(dir, 'index.json'), 'utf8').catch(() => undefined);
        if (index === undefined) continue;
        const entries = JSON.parse(index) as AgentFileHistoryEntry[];
        const versions = await Promise.all(
          entries.map(async (entry) => ({ entry, content: await readFile(join(dir, `${entry.version}.md`), 'utf8') })),
        );
        await adopt(kv, scope, file, versions);
        moved++;
      }
      await rm(join(root, segment, agent), { recursive: true, force: true });
    }
    await rm(join(root, segment), { recursive: true, force: true });
  }
  await rm(root, { recursive: true, force: true });
  return moved;
}
