import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createLogger } from '#logging';
import { FUNCTIONAL_TIMEOUTS, SANDBOX_MODE, testServers } from '#testing';
import { startEmbedded, startOverNats } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';

export type Mode = 'embedded' | 'nats';

/** A running Alfred for a test: its base URL and how to stop it (and remove its data). */
export interface TestSystem {
  readonly mode: Mode;
  readonly url: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

const logger = createLogger({ service: 'e2e', level: 'silent' });

/**
 * Starts the system the way users run it: `embedded` is `npm start`'s composition; `nats` gives every
 * service and the gateway its own NATS connection under a unique subject prefix, so every request
 * really crosses NATS.
 */
export async function startSystem(mode: Mode, extraEnv: Record<string, string> = {}): Promise<TestSystem> {
  const dataDir = await mkdtemp(join(tmpdir(), `alfred-e2e-${mode}-`));
  const env: NodeJS.ProcessEnv = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'silent',
    ALFRED_OS_SANDBOX: SANDBOX_MODE,
    ...FUNCTIONAL_TIMEOUTS,
    ...extraEnv,
  };
  const gateway = loadGatewayConfig(env);
  const options = { env, gateway, logger, port: 0 };
  const subjectPrefix = `e2e-${randomUUID().slice(0, 8)}.`;
  const alfred =
    mode === 'embedded'
      ? await startEmbedded(options)
      : await startOverNats({ ...options, natsUrl: testServers.natsUrl, subjectPrefix, ephemeral: true });
  return {
    mode,
    url: alfred.url,
    dataDir,
    async stop() {
      await alfred.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A small JSON client for the API under test. */
export function client(base: string, defaults: Record<string, string> = {}) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method, headers: { ...defaults, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, text, headers: res.headers };
  };
  return {
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    put: (path: string, body?: unknown, headers?: Record<string, string>) => call('PUT', path, body, headers),
    delete: (path: string, body?: unknown, headers?: Record<string, string>) => call('DELETE', path, body, headers),
    call,
  };
}
export type Client = ReturnType<typeof client>;

/** Creates named agents (everything an agent owns exists only once the agent does); `headers` carry a tenant's key. */
export async function createAgents(
  base: string,
  names: readonly string[],
  headers: Record<string, string> = {},
): Promise<void> {
  for (const name of names) {
    const res = await client(base, headers).post('/agents', { name });
    if (res.status !== 201 && res.status !== 409) throw new Error(`creating agent ${name}: ${res.status} ${res.text}`);
  }
}
