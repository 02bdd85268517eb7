import { runStandalone } from '#runtime';
import { agentRuntimeService } from './agent-runtime.module.js';

await runStandalone(agentRuntimeService);
