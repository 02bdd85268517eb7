// Runs the TypeScript sources in a child process without a build (`node --import ./e2e/source-loader.mjs
// --conditions=alfred-source services/main.ts`): swc compiles each file as jest does, decorators and metadata included.
import { existsSync, readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from '@swc/core';

const options = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

registerHooks({
  resolve(specifier, context, next) {
    if (
      specifier.endsWith('.js') &&
      (specifier.startsWith('.') || specifier.startsWith('/')) &&
      context.parentURL?.endsWith('.ts')
    ) {
      const ts = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
      if (existsSync(fileURLToPath(ts))) return { url: ts.href, shortCircuit: true };
    }
    return next(specifier, context);
  },
  load(url, context, next) {
    if (!url.endsWith('.ts')) return next(url, context);
    const path = fileURLToPath(url);
    const { code } = transformSync(readFileSync(path, 'utf8'), { ...options, filename: path });
    return { format: 'module', source: code, shortCircuit: true };
  },
});
