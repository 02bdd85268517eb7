// The compose stack test: run by docker/compose-e2e.sh against a running stack, never by `npm test`.
import base from './jest.config.js';

const [unit] = base.projects;
export default {
  ...unit,
  displayName: 'stack',
  testMatch: ['<rootDir>/e2e/stack/**/*.stack-spec.ts'],
  // One stack: its suites take turns (one restarts NATS under load).
  maxWorkers: 1,
  testTimeout: base.testTimeout,
};
