import { executableSkillsSuite } from './executable-skills.suite.js';

describe('executable skills API (embedded: npm start)', () => executableSkillsSuite('embedded'));
