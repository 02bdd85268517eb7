import { recallApiSuite } from './recall-api.suite.js';

describe('feedback, checkpoints, remediations and recall (embedded)', () => recallApiSuite('embedded'));
