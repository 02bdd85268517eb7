import { readFileSync } from 'node:fs';

/** The API version is the package version, read once at start-up. */
export const API_VERSION: string = (() => {
  for (const rel of ['../../../package.json', '../../../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next layout (source vs dist)
    }
  }
  return '0.0.0';
})();

/** What `GET /` lists: every endpoint family of the API. */
export const API_ENDPOINTS: ReadonlyArray<{ path: string; methods: string[]; description: string }> = [
  { path: '/health', methods: ['GET'], description: 'Health check' },
  { path: '/memories', methods: ['GET', 'POST', 'DELETE'], description: 'Memory management' },
  { path: '/memories/batch', methods: ['POST'], description: 'Create many memories' },
  { path: '/memories/{id}', methods: ['GET', 'PUT', 'DELETE'], description: 'One memory' },
  { path: '/memories/{id}/history', methods: ['GET'], description: 'Every change of one memory' },
  { path: '/search', methods: ['GET'], description: 'Semantic search' },
];
