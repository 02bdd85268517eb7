import { runStandalone } from '#runtime';
import { compactorService } from './compactor.module.js';

await runStandalone(compactorService);
