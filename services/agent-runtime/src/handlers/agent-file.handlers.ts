import { Inject, Injectable } from '@nestjs/common';
import { AgentFileRoutes } from '#contracts';
import type { AgentFileStore } from '#agent-files';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { AgentFileEdits } from '../agents/agent-file-edits.js';

export const AGENT_FILE_STORE = Symbol('AGENT_FILE_STORE');

/**
 * The versioned agent files on the bus: agent-runtime owns them (the gateway, the learner and the distiller reach
 * them here), and every instance serves any agent's files (state lives in the store).
 */
@Injectable()
export class AgentFileHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(AGENT_FILE_STORE) private readonly files: AgentFileStore,
    private readonly edits: AgentFileEdits,
  ) {
    super(bus);
  }

  protected register(): void {
    const f = this.files;
    this.handle(AgentFileRoutes.get, async (p) => ({
      agent: p.scope.agent,
      file: p.file,
      ...(await f.read(p.scope, p.file)),
    }));
    this.handle(AgentFileRoutes.history, async (p) => ({
      agent: p.scope.agent,
      file: p.file,
      versions: await f.history(p.scope, p.file),
    }));
    this.handle(AgentFileRoutes.version, async (p) => ({
      agent: p.scope.agent,
      file: p.file,
      ...(await f.readVersion(p.scope, p.file, p.version)),
    }));
    this.handle(AgentFileRoutes.restore, (p) =>
      this.edits.restore(p.scope, p.file, p.version, p.expected_version, p.writer),
    );
    this.handle(AgentFileRoutes.edit, (p) => this.edits.edit(p.scope, p.file, p.request, p.writer));
    this.handle(AgentFileRoutes.write, async (p) => ({
      version: await f.write(p.scope, p.file, p.content, {
        reason: p.reason,
        expectedVersion: p.expected_version,
        writer: p.writer,
      }),
    }));
  }
}
