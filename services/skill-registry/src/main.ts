import { runStandalone } from '#runtime';
import { skillRegistryService } from './skill-registry.module.js';

await runStandalone(skillRegistryService);
