import { AgentFileRoutes, type AgentFileHistoryEntry, type AgentFileKind, type Scope, type Writer } from '#contracts';
import { currentRequest, type Bus } from '#bus';
import type { AgentFileContent, AgentFileStore, AgentFileVersion, AgentFileWriteOptions } from './agent-file-store.js';

/** What services other than agent-runtime do with agent files. */
export type AgentFileAccess = Pick<AgentFileStore, 'read' | 'write' | 'history' | 'readVersion' | 'restore'>;

/**
 * Agent files as the services that do not own them reach them: over the bus from agent-runtime, which owns the store.
 * Errors come back as they were raised there (CONFLICT with the versions, NOT_FOUND, PAYLOAD_TOO_LARGE); the request
 * being handled lends its correlation id and deadline.
 */
export class BusAgentFiles implements AgentFileAccess {
  constructor(private readonly bus: Bus) {}

  async read(scope: Scope, file: AgentFileKind): Promise<AgentFileContent> {
    const { content, version, updated_at } = await this.bus.request(
      AgentFileRoutes.get,
      { scope, file },
      { context: currentRequest() },
    );
    return { content, version, updated_at };
  }

  async write(scope: Scope, file: AgentFileKind, content: string, options: AgentFileWriteOptions): Promise<number> {
    const request = {
      scope,
      file,
      content,
      reason: options.reason,
      expected_version: options.expectedVersion,
      writer: options.writer,
    };
    return (await this.bus.request(AgentFileRoutes.write, request, { context: currentRequest() })).version;
  }

  async history(scope: Scope, file: AgentFileKind): Promise<AgentFileHistoryEntry[]> {
    return (await this.bus.request(AgentFileRoutes.history, { scope, file }, { context: currentRequest() })).versions;
  }

  async readVersion(scope: Scope, file: AgentFileKind, version: number): Promise<AgentFileVersion> {
    const {
      agent: _agent,
      file: _file,
      ...kept
    } = await this.bus.request(AgentFileRoutes.version, { scope, file, version }, { context: currentRequest() });
    return kept;
  }

  async restore(
    scope: Scope,
    file: AgentFileKind,
    version: number,
    options: { expectedVersion?: number; writer?: Writer } = {},
  ): Promise<number> {
    const request = { scope, file, version, expected_version: options.expectedVersion, writer: options.writer };
    return (await this.bus.request(AgentFileRoutes.restore, request, { context: currentRequest() })).version;
  }
}
