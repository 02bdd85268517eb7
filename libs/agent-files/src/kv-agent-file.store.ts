import { AgentFileHistoryEntry, AgentFileKind, ErrorCode, agentFileName, type Scope, type Writer } from '#contracts';
import { AlfredError } from '#errors';
import { isKvConflict, keyToken, type KvStore } from '#kv';
import { z } from 'zod';
import {
  checkContent,
  defaultContent,
  entryFor,
  fileConflict,
  restoreReason,
  versionNotFound,
} from './agent-file-record.js';
import type { AgentFileContent, AgentFileStore, AgentFileVersion, AgentFileWriteOptions } from './agent-file-store.js';

const HistoryIndex = z.array(AgentFileHistoryEntry);
const MAX_ATTEMPTS = 100;

// Per agent and file, `i.` holds the history index (every version's entry, oldest first) and `c.` the content of each
// version, keyed by version and digest: a writer that loses the race for a version number never overwrites the
// content the winner's entry names.
const agentToken = (scope: Scope) => `${keyToken(scope.tenant)}.${scope.agent}`;
export const indexKey = (scope: Scope, file: AgentFileKind) => `i.${agentToken(scope)}.${file}`;
export const contentKey = (scope: Scope, file: AgentFileKind, e: Pick<AgentFileHistoryEntry, 'version' | 'digest'>) =>
  `c.${agentToken(scope)}.${file}.${e.version}.${e.digest.replace(/^sha256:/, '')}`;

/**
 * Versioned USER.md / SOUL.md / MEMORY.md on the key-value port (Redis distributed, files embedded). A version's
 * content is stored before the index names it, and the index moves by compare-and-set, so the index never points at a
 * missing version and of two writers of one version number exactly one wins (the other retries, or gets CONFLICT
 * when it asked for the version it read).
 */
export class KvAgentFileStore implements AgentFileStore {
  constructor(private readonly kv: KvStore) {}

  async read(scope: Scope, file: AgentFileKind): Promise<AgentFileContent> {
    const last = (await this.index(scope, file)).entries.at(-1);
    if (!last) return { content: defaultContent(file), version: 0, updated_at: null };
    const content = await this.kv.get(contentKey(scope, file, last));
    return { content: content?.value ?? '', version: last.version, updated_at: last.at };
  }

  async write(scope: Scope, file: AgentFileKind, content: string, options: AgentFileWriteOptions): Promise<number> {
    checkContent(content);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const { entries, revision } = await this.index(scope, file);
      const current = entries.at(-1)?.version ?? 0;
      if (options.expectedVersion !== undefined && options.expectedVersion !== current)
        throw fileConflict(file, options.expectedVersion, current);
      const entry = { version: current + 1, ...entryFor(content, options.reason, options.writer) };
      await this.kv.put(contentKey(scope, file, entry), content);
      try {
        await this.kv.put(indexKey(scope, file), JSON.stringify([...entries, entry]), { expected: revision });
        return entry.version;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new Error(`${agentFileName[file]} changed ${MAX_ATTEMPTS} times while being written`);
  }

  async history(scope: Scope, file: AgentFileKind): Promise<AgentFileHistoryEntry[]> {
    return [...(await this.index(scope, file)).entries].reverse();
  }

  async readVersion(scope: Scope, file: AgentFileKind, version: number): Promise<AgentFileVersion> {
    const entry = (await this.index(scope, file)).entries.find((e) => e.version === version);
    const content = entry && (await this.kv.get(contentKey(scope, file, entry)));
    if (!entry || !content) throw versionNotFound(file, version);
    return { ...entry, content: content.value };
  }

  async restore(
    scope: Scope,
    file: AgentFileKind,
    version: number,
    options: { expectedVersion?: number; writer?: Writer } = {},
  ): Promise<number> {
    const old = await this.readVersion(scope, file, version);
    return this.write(scope, file, old.content, {
      reason: restoreReason(version),
      expectedVersion: options.expectedVersion,
      writer: options.writer,
    });
  }

  async deleteAll(scope: Scope): Promise<number> {
    let written = 0;
    for (const file of AgentFileKind.options) if (await this.kv.delete(indexKey(scope, file))) written++;
    for (const key of await this.kv.keys(`c.${agentToken(scope)}.`)) await this.kv.delete(key);
    return written;
  }

  async close(): Promise<void> {
    await this.kv.close();
  }

  private async index(
    scope: Scope,
    file: AgentFileKind,
  ): Promise<{ entries: AgentFileHistoryEntry[]; revision: number }> {
    const entry = await this.kv.get(indexKey(scope, file));
    if (!entry) return { entries: [], revision: 0 };
    let json: unknown;
    try {
      json = JSON.parse(entry.value);
    } catch {
      json = undefined;
    }
    const parsed = HistoryIndex.safeParse(json);
    if (!parsed.success)
      throw new AlfredError(ErrorCode.Internal, `history index of ${agentFileName[file]} is corrupt`, { file });
    return { entries: parsed.data, revision: entry.revision };
  }
}
