import { channelsSuite } from './channels.suite.js';

describe('Telegram channel (embedded)', () => channelsSuite('embedded'));
