import { capabilitiesSuite } from './capabilities.suite.js';

describe('capabilities API (embedded: npm start)', () => capabilitiesSuite('embedded'));
