import { runStandalone } from '#runtime';
import { learnerService } from './learner.module.js';

await runStandalone(learnerService);
