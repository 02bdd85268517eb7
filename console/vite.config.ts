import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The console is built into static files the gateway serves under /console (no second server). */
export default defineConfig({
  root: here,
  base: '/console/',
  // JSX through Vite's own transformer (oxc); no React plugin is needed for a production build.
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
  },
  logLevel: 'warn',
});
