import { describeWithGit } from '#testing';
import { skillsInstallSuite } from './skills-install.suite.js';

describeWithGit('skills from git (embedded: npm start)', () => skillsInstallSuite('embedded'));
