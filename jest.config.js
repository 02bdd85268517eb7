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

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,bin}/**/*.spec.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/{libs,services}/**/*.int-spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/e2e/**/*.e2e-spec.ts'] },
  ],
};
