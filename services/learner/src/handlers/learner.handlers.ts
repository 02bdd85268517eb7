import { Inject, Injectable } from '@nestjs/common';
import { LearnerRoutes } from '#contracts';
import type { AgentFileStore } from '#agent-files';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { AgentFileEdits } from '../agent-file-edits.js';
import { LearnerService } from '../learner.service.js';

export const AGENT_FILE_STORE = Symbol('AGENT_FILE_STORE');

/** Learning and the versioned agent files on the bus. */
@Injectable()
export class LearnerHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly learner: LearnerService,
    private readonly edits: AgentFileEdits,
    @Inject(AGENT_FILE_STORE) private readonly files: AgentFileStore,
  ) {
    super(bus);
  }

  protected register(): void {
    const f = this.files;
    this.handle(LearnerRoutes.learn, (p, ctx) => this.learner.learn(p.scope, p.request, ctx));
    this.handle(LearnerRoutes.fileGet, async (p) => ({ agent: p.scope.agent, file: p.file, ...(await f.read(p.scope, p.file)) }));
    this.handle(LearnerRoutes.fileHistory, async (p) => ({ agent: p.scope.agent, file: p.file, versions: await f.history(p.scope, p.file) }));
    this.handle(LearnerRoutes.fileVersion, async (p) => ({ agent: p.scope.agent, file: p.file, ...(await f.readVersion(p.scope, p.file, p.version)) }));
    this.handle(LearnerRoutes.fileRestore, (p) => this.edits.restore(p.scope, p.file, p.version, p.expected_version, p.writer));
    this.handle(LearnerRoutes.fileWrite, (p) => this.edits.edit(p.scope, p.file, p.request, p.writer));
  }
}
