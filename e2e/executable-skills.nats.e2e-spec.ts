import { describeWithNats } from '#testing';
import { executableSkillsSuite } from './executable-skills.suite.js';

const describeNats = await describeWithNats();

describeNats('executable skills API (distributed: every service on its own NATS connection)', () =>
  executableSkillsSuite('nats'),
);
