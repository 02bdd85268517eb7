import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Where the web console is served. Its files are public (they hold no secret); every API call it makes needs the key.
 */
export const CONSOLE_PREFIX = '/console';

/** The page may load only its own bundle and talk only to this gateway: no inline script, no third-party origin. */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** True for the console's own paths (static files, not API routes). */
export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`);
}

/** `dist/console` under the package root (the folder holding package.json), from source or from `dist/`. */
export function defaultConsoleDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return join(dir, 'dist', 'console');
}

/** Serves the console bundle `vite build` wrote to `dir`; without one, its paths say how to build it. */
export async function installConsole(app: FastifyInstance, dir: string): Promise<void> {
  if (!existsSync(join(dir, 'index.html'))) {
    const notBuilt = async () => {
      throw new AlfredError(
        ErrorCode.NotFound,
        `the web console is not built (no ${join(dir, 'index.html')}): run npm run build`,
      );
    };
    app.get(CONSOLE_PREFIX, notBuilt);
    app.get(`${CONSOLE_PREFIX}/*`, notBuilt);
    return;
  }
  const security = (reply: FastifyReply) =>
    reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
  // The page at /console (and /console/: trailing slashes are ignored); the files under it come from @fastify/static.
  app.get(CONSOLE_PREFIX, async (_req, reply) => {
    const html = await readFile(join(dir, 'index.html'));
    return security(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html);
  });
  await app.register(fastifyStatic, {
    root: dir,
    prefix: `${CONSOLE_PREFIX}/`,
    index: false,
    wildcard: true,
    decorateReply: false,
    setHeaders(reply, path) {
      security(reply);
      // Bundles carry a content hash in their names; the page itself must be fetched fresh after an upgrade.
      reply.header(
        'cache-control',
        path.includes(`${join('assets', '')}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}
