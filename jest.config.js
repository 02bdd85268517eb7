// Jest on ESM with swc: decorators and metadata as Nest needs them; type-checking is `npm run typecheck`.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
for (const [alias, target] of Object.entries(pkg.imports)) {
  moduleNameMapper[`^${alias}$`] = `<rootDir>/${target['alfred-source'].slice(2)}`;
}

const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
      },
      module: { type: 'es6' },
    },
  ],
};

const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper,
  transform,
  testEnvironment: 'node',
  // The app copy docker/local-images.sh builds images from (its package.json would collide with ours).
  modulePathIgnorePatterns: ['<rootDir>/.docker-host-app/'],
};

// Qdrant, and NATS and Redis where none answer, in containers for the suites that need servers: started once per run
// (only when an int or e2e suite is selected) where a Docker engine answers; libs/testing/src/test-dependencies.ts.
const dependencies = {
  globalSetup: '<rootDir>/libs/testing/src/test-dependencies.ts',
  globalTeardown: '<rootDir>/libs/testing/src/jest-dependencies.teardown.ts',
};

export default {
  // A suite whose setup times out can leave the system it was starting running (its afterAll has no handle
  // to stop): the run must still end with its verdict instead of waiting on those handles until CI's limit.
  forceExit: true,
  // Real servers and real processes: a hook or test that starts a system gets more than jest's 5 s default (a loaded
  // 2-core machine takes longer to start one); it guards against hangs and times nothing — speed is the bench's
  // business. Jest takes testTimeout from the top level only (a project's own is ignored).
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,bin,console}/**/*.spec.ts'] },
    { ...common, ...dependencies, displayName: 'int', testMatch: ['<rootDir>/{libs,services}/**/*.int-spec.ts'] },
    { ...common, ...dependencies, displayName: 'e2e', testMatch: ['<rootDir>/e2e/**/*.e2e-spec.ts'] },
  ],
};
