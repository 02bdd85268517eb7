import type { ServiceDefinition } from '#runtime';
import { agentRuntimeService } from './agent-runtime/src/agent-runtime.module.js';
import { channelsService } from './channels/src/channels.module.js';
import { compactorService } from './compactor/src/compactor.module.js';
import { distillerService } from './distiller/src/distiller.module.js';
import { learnerService } from './learner/src/learner.module.js';
import { memoryService } from './memory/src/memory.module.js';
import { skillRegistryService } from './skill-registry/src/skill-registry.module.js';
import { skillRunnerService } from './skill-runner/src/skill-runner.module.js';

/** Every bus service, in start order (the gateway is hosted separately, last). The composition root's list. */
// biome-ignore lint/suspicious/noExplicitAny: each has its own config type; hostService pairs it with its loadConfig
export const ALL_SERVICES: ReadonlyArray<ServiceDefinition<any>> = [
  memoryService,
  skillRegistryService,
  skillRunnerService,
  compactorService,
  distillerService,
  learnerService,
  agentRuntimeService,
  // Last: stopped first, so running chat turns can finish while the agents still run.
  channelsService,
];
