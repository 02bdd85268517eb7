// The compose stack test: run by docker/compose-e2e.sh against a running stack, never by `npm test`.
import base from './jest.config.js';

const [unit] = base.projects;
/** @public jest's configuration of the stack test (docker/compose-e2e.sh passes it with --config). */
export default {
  ...unit,
  displayName: 'stack',
  testMatch: ['<rootDir>/e2e/stack/**/*.stack-spec.ts'],
  // One stack: its suites take turns (one restarts NATS under load).
  maxWorkers: 1,
  testTimeout: base.testTimeout,
};
