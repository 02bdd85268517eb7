import { runStandalone } from '#runtime';
import { distillerService } from './distiller.module.js';

await runStandalone(distillerService);
