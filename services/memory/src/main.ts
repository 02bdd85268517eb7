import { runStandalone } from '#runtime';
import { memoryService } from './memory.module.js';

await runStandalone(memoryService);
