import { runStandalone } from '#runtime';
import { skillRunnerService } from './skill-runner.module.js';

await runStandalone(skillRunnerService);
