import { memoryApiSuite } from './memory-api.suite.js';

describe('memory API (embedded: npm start)', () => memoryApiSuite('embedded'));
