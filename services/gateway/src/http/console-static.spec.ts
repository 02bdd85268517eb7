import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { isAlfredError } from '#errors';
import { defaultConsoleDir, installConsole, isConsolePath } from './console-static.js';

describe('console static files', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-console-static-'));
    app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
    app.setErrorHandler((err, _req, reply) =>
      reply.status(isAlfredError(err) ? 404 : 500).send({ message: (err as Error).message }),
    );
  });
  afterEach(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe(installConsole.name, () => {
    it('should serve the page at /console and /console/ and hashed bundles under it, with the CSP', async () => {
      await mkdir(join(dir, 'assets'));
      await writeFile(
        join(dir, 'index.html'),
        '<!doctype html><script type="module" src="/console/assets/app-1.js"></script>',
      );
      await writeFile(join(dir, 'assets', 'app-1.js'), 'export {};');
      await installConsole(app, dir);
      for (const url of ['/console', '/console/']) {
        const page = await app.inject({ url });
        expect(page.statusCode).toBe(200);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expect(page.headers['content-security-policy']).toContain("script-src 'self'");
        expect(page.headers['cache-control']).toBe('no-cache');
      }
      const bundle = await app.inject({ url: '/console/assets/app-1.js' });
      expect(bundle.statusCode).toBe(200);
      expect(bundle.headers['cache-control']).toContain('immutable');
      expect(bundle.headers['content-security-policy']).toContain("default-src 'self'");
    });

    it('should serve nothing outside its folder', async () => {
      await writeFile(join(dir, 'index.html'), 'page');
      await writeFile(join(dir, '..', `${dir.split('/').pop()}-secret.txt`), 'TOP-SECRET-CONTENT');
      await installConsole(app, dir);
      for (const url of [
        '/console/../package.json',
        '/console/%2e%2e/package.json',
        `/console/..%2f${dir.split('/').pop()}-secret.txt`,
      ]) {
        const res = await app.inject({ url });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.body).not.toContain('TOP-SECRET-CONTENT');
      }
      await rm(join(dir, '..', `${dir.split('/').pop()}-secret.txt`));
    });

    it('should say how to build the console when it is not built', async () => {
      await installConsole(app, join(dir, 'missing'));
      const res = await app.inject({ url: '/console/' });
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toMatch(/not built.*npm run build/);
    });
  });

  describe(isConsolePath.name, () => {
    it('should match the console and what is under it, and nothing that merely starts alike', () => {
      expect(['/console', '/console/', '/console/assets/a.js'].map(isConsolePath)).toEqual([true, true, true]);
      expect(['/consoles', '/console-x', '/memories'].map(isConsolePath)).toEqual([false, false, false]);
    });
  });

  describe(defaultConsoleDir.name, () => {
    it('should point at dist/console under the package root', () => {
      expect(defaultConsoleDir()).toBe(join(new URL('../../../..', import.meta.url).pathname, 'dist', 'console'));
    });
  });
});
