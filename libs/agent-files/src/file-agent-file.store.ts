import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { agentFileName, AgentFileHistoryEntry, AgentFileKind, ErrorCode, type Scope, type Writer } from '#contracts';
import { AlfredError } from '#errors';
import { z } from 'zod';
import { readIfExists, withLock, writeFileAtomic } from '#files';
import { checkContent, defaultContent, entryFor, fileConflict, restoreReason, safeSegment, versionNotFound } from './agent-file-record.js';
import type { AgentFileContent, AgentFileStore, AgentFileVersion, AgentFileWriteOptions } from './agent-file-store.js';

export interface FileAgentFileStoreOptions {
  /** Files live under `<dataDir>/agents/<tenant>/<agent>/`. */
  readonly dataDir: string;
}

const HistoryIndex = z.array(AgentFileHistoryEntry);

/**
 * The embedded agent-file store: `<agent>/<FILE>.md` is the current text, `history/<FILE>/<version>.md` every
 * version and `history/<FILE>/index.json` their entries. A version is written before the index names it, so
 * the index never points at a missing file; the index is the source of truth for the current version.
 */
export class FileAgentFileStore implements AgentFileStore {
  private readonly root: string;

  constructor(options: FileAgentFileStoreOptions) {
    this.root = resolve(options.dataDir, 'agents');
  }

  async read(scope: Scope, file: AgentFileKind): Promise<AgentFileContent> {
    const last = (await this.index(scope, file)).at(-1);
    if (!last) return { content: defaultContent(file), version: 0, updated_at: null };
    const content = await readIfExists(this.versionPath(scope, file, last.version));
    return { content: content ?? '', version: last.version, updated_at: last.at };
  }

  async write(scope: Scope, file: AgentFileKind, content: string, options: AgentFileWriteOptions): Promise<number> {
    checkContent(content);
    return withLock(this.indexPath(scope, file), async () => {
      const index = await this.index(scope, file);
      const current = index.at(-1)?.version ?? 0;
      if (options.expectedVersion !== undefined && options.expectedVersion !== current) {
        throw fileConflict(file, options.expectedVersion, current);
      }
      const entry = { version: current + 1, ...entryFor(content, options.reason, options.writer) };
      await writeFileAtomic(this.versionPath(scope, file, entry.version), content);
      await writeFileAtomic(this.indexPath(scope, file), JSON.stringify([...index, entry], null, 1));
      await writeFileAtomic(join(this.dir(scope), agentFileName[file]), content);
      return entry.version;
    });
  }

  async history(scope: Scope, file: AgentFileKind): Promise<AgentFileHistoryEntry[]> {
    return [...(await this.index(scope, file))].reverse();
  }

  async readVersion(scope: Scope, file: AgentFileKind, version: number): Promise<AgentFileVersion> {
    const entry = (await this.index(scope, file)).find((e) => e.version === version);
    const content = entry && (await readIfExists(this.versionPath(scope, file, version)));
    if (!entry || content === undefined) throw versionNotFound(file, version);
    return { ...entry, content };
  }

  async restore(scope: Scope, file: AgentFileKind, version: number, options: { expectedVersion?: number; writer?: Writer } = {}): Promise<number> {
    const old = await this.readVersion(scope, file, version);
    return this.write(scope, file, old.content, { reason: restoreReason(version), expectedVersion: options.expectedVersion, writer: options.writer });
  }

  async deleteAll(scope: Scope): Promise<number> {
    let written = 0;
    for (const file of AgentFileKind.options) if ((await this.index(scope, file)).length > 0) written++;
    await rm(this.dir(scope), { recursive: true, force: true });
    return written;
  }

  async close(): Promise<void> {}

  private async index(scope: Scope, file: AgentFileKind): Promise<AgentFileHistoryEntry[]> {
    const text = await readIfExists(this.indexPath(scope, file));
    if (text === undefined) return [];
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = HistoryIndex.safeParse(json);
    if (!parsed.success) throw new AlfredError(ErrorCode.Internal, `history index of ${agentFileName[file]} is corrupt`, { file });
    return parsed.data;
  }

  private dir(scope: Scope): string {
    return join(this.root, safeSegment(scope.tenant), scope.agent);
  }

  private historyDir(scope: Scope, file: AgentFileKind): string {
    return join(this.dir(scope), 'history', agentFileName[file].replace(/\.md$/, ''));
  }

  private indexPath(scope: Scope, file: AgentFileKind): string {
    return join(this.historyDir(scope, file), 'index.json');
  }

  private versionPath(scope: Scope, file: AgentFileKind, version: number): string {
    return join(this.historyDir(scope, file), `${version}.md`);
  }
}
