import { runStandalone } from '#runtime';
import { channelsService } from './channels.module.js';

await runStandalone(channelsService);
