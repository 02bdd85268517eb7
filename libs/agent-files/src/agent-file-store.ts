import type { AgentFileHistoryEntry, AgentFileKind, Scope, Writer } from '#contracts';

/** The current content of an agent file; version 0 (default header, no timestamp) when never written. */
export interface AgentFileContent {
  readonly content: string;
  readonly version: number;
  readonly updated_at: string | null;
}

/** One kept version with its content. */
export interface AgentFileVersion extends AgentFileHistoryEntry {
  readonly content: string;
}

export interface AgentFileWriteOptions {
  /** Why it changed (shown in history), e.g. `learn: prefers short answers`. */
  readonly reason: string;
  /** Refuse with CONFLICT unless the current version is this one. */
  readonly expectedVersion?: number;
  /** Who made the change, kept with the version (provenance). */
  readonly writer?: Writer;
}

/**
 * Versioned USER.md / SOUL.md / MEMORY.md of each agent, in a store every service instance reaches.
 * Every version is kept; a restore writes a new version equal to an old one.
 */
export interface AgentFileStore {
  read(scope: Scope, file: AgentFileKind): Promise<AgentFileContent>;
  /** Returns the new version number. */
  write(scope: Scope, file: AgentFileKind, content: string, options: AgentFileWriteOptions): Promise<number>;
  /** Newest first. */
  history(scope: Scope, file: AgentFileKind): Promise<AgentFileHistoryEntry[]>;
  /** NOT_FOUND for a version that was never written. */
  readVersion(scope: Scope, file: AgentFileKind, version: number): Promise<AgentFileVersion>;
  /** Writes a new version with the content of `version`; returns the new version number. */
  restore(
    scope: Scope,
    file: AgentFileKind,
    version: number,
    options?: { expectedVersion?: number; writer?: Writer },
  ): Promise<number>;
  /** Removes every file and version of the agent (its deletion); returns how many files had been written. */
  deleteAll(scope: Scope): Promise<number>;
  close(): Promise<void>;
}
