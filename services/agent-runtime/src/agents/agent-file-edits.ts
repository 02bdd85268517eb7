import {
  agentFileName,
  ErrorCode,
  type AgentFileKind,
  type AgentFileRestored,
  type AgentFileWriteBody,
  type AgentFileWritten,
  type Scope,
  type Writer,
} from '#contracts';
import type { AgentFileStore } from '#agent-files';
import { AlfredError, isAlfredError } from '#errors';
import { SecretGuard } from '#content-safety';

/** The reason a hand edit is recorded with when the editor gives none. */
export const EDIT_REASON = 'edited by hand';

/**
 * A person's changes to an agent file: an edit saved against the version it started from, and a restore. A save
 * that lost the race is refused with the text that won, so the editor can show it; credentials are refused (or
 * redacted) as for memories; every change is a new version that names who made it.
 */
export class AgentFileEdits {
  constructor(
    private readonly files: AgentFileStore,
    private readonly secrets: SecretGuard = new SecretGuard(),
  ) {}

  async edit(scope: Scope, file: AgentFileKind, req: AgentFileWriteBody, writer: Writer): Promise<AgentFileWritten> {
    const content = await this.secrets.admit(scope.tenant, req.content, { field: 'content' });
    try {
      // A file never written shows its default text at version 0: that text becomes version 1, so the edit can be
      // undone.
      const base = req.expected_version === 0 ? await this.baseVersion(scope, file) : req.expected_version;
      const version = await this.files.write(scope, file, content, {
        reason: req.reason ?? EDIT_REASON,
        expectedVersion: base,
        writer,
      });
      const { at } = await this.files.readVersion(scope, file, version);
      return { agent: scope.agent, file, version, previous_version: base, updated_at: at };
    } catch (err) {
      throw await this.withCurrentText(scope, file, req.expected_version, err);
    }
  }

  async restore(
    scope: Scope,
    file: AgentFileKind,
    version: number,
    expectedVersion: number | undefined,
    writer?: Writer,
  ): Promise<AgentFileRestored> {
    try {
      const restored = await this.files.restore(scope, file, version, { expectedVersion, writer });
      return { agent: scope.agent, file, version: restored, restored_from: version };
    } catch (err) {
      throw await this.withCurrentText(scope, file, expectedVersion ?? 0, err);
    }
  }

  /** Version 1 (the default text) of a never-written file, or a conflict when someone wrote it meanwhile. */
  private async baseVersion(scope: Scope, file: AgentFileKind): Promise<number> {
    const current = await this.files.read(scope, file);
    if (current.version > 0) return 0;
    return this.files.write(scope, file, current.content, { reason: 'initial content', expectedVersion: 0 });
  }

  /** A lost race becomes a CONFLICT carrying the version and text that won; other errors pass unchanged. */
  private async withCurrentText(scope: Scope, file: AgentFileKind, expected: number, err: unknown): Promise<unknown> {
    if (!isAlfredError(err) || err.code !== ErrorCode.Conflict) return err;
    const current = await this.files.read(scope, file);
    return new AlfredError(
      ErrorCode.Conflict,
      `${agentFileName[file]} changed since you opened it (you edited version ${expected}; version ` +
        `${current.version} was saved meanwhile). ` +
        'Nothing was saved: compare with the current text and save again.',
      {
        file,
        expected_version: expected,
        version: current.version,
        current: { content: current.content, version: current.version, updated_at: current.updated_at },
      },
    );
  }
}
