import { describeWithGit, describeWithNats } from '#testing';
import { skillsInstallSuite } from './skills-install.suite.js';

const describeNats = await describeWithNats();

describeNats('skills from git (distributed: every service over NATS)', () =>
  describeWithGit('install, update, delete', () => skillsInstallSuite('nats')),
);
