import { skillsApiSuite } from './skills-api.suite.js';

describe('skills API (embedded: npm start)', () => skillsApiSuite('embedded'));
