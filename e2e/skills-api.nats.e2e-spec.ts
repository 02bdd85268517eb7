import { describeWithNats } from '#testing';
import { skillsApiSuite } from './skills-api.suite.js';

const describeNats = await describeWithNats();

describeNats('skills API (distributed: every service over NATS)', () => skillsApiSuite('nats'));
