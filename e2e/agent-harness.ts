import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '#logging';
import { NatsBus } from '#bus';
import { hostService } from '#runtime';
import {
  AnthropicLoopback,
  FUNCTIONAL_TIMEOUTS,
  SANDBOX_MODE,
  testServers,
  type AnthropicLoopbackOptions,
} from '#testing';
import { agentRuntimeService } from '../services/agent-runtime/src/agent-runtime.module.js';
import { startEmbedded, startOverNats, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import type { Mode } from './harness.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });

/** A free loopback port, for a test that must know its address before Alfred starts (a restart on the same port). */
export { freePort } from '#testing';

export interface AgentSystem {
  readonly url: string;
  readonly dataDir: string;
  readonly model: AnthropicLoopback;
  readonly env: NodeJS.ProcessEnv;
  readonly alfred: RunningAlfred;
  readonly subjectPrefix?: string;
  stop(): Promise<void>;
}

/**
 * Alfred with the loopback model on a port chosen at bind time: ALFRED_API_URL is not set, so skills' curl
 * commands reach this gateway only if the runtime learns its real address.
 */
export async function startAgentSystem(
  mode: Mode,
  extraEnv: Record<string, string> = {},
  modelOptions: number | AnthropicLoopbackOptions = 0,
): Promise<AgentSystem> {
  const model = await AnthropicLoopback.start(
    typeof modelOptions === 'number' ? { latencyMs: modelOptions } : modelOptions,
  );
  const dataDir = await mkdtemp(join(tmpdir(), `alfred-agent-${mode}-`));
  // A test that restarts Alfred on the same address names the port; otherwise it is chosen at bind time.
  const port = extraEnv.ALFRED_API_PORT ? Number(extraEnv.ALFRED_API_PORT) : 0;
  const distributed =
    mode === 'nats' ? { REDIS_URL: testServers.redisUrl, ALFRED_REDIS_PREFIX: `e2e-${randomUUID().slice(0, 8)}:` } : {};
  const env: NodeJS.ProcessEnv = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_OS_SANDBOX: SANDBOX_MODE,
    ALFRED_LOG_LEVEL: 'silent',
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: model.apiKey,
    ALFRED_MODEL_MAX_RETRIES: '0',
    ...FUNCTIONAL_TIMEOUTS,
    ...distributed,
    ...extraEnv,
  };
  const gateway = loadGatewayConfig(env);
  const subjectPrefix = mode === 'nats' ? `e2e-${randomUUID().slice(0, 8)}.` : undefined;
  const options = { env, gateway, logger, port };
  const alfred =
    mode === 'embedded'
      ? await startEmbedded(options)
      : await startOverNats({ ...options, natsUrl: testServers.natsUrl, subjectPrefix, ephemeral: true });
  return {
    url: alfred.url,
    dataDir,
    model,
    env,
    alfred,
    subjectPrefix,
    async stop() {
      await alfred.stop();
      await model.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SseEvent {
  readonly event: string;
  readonly data: any;
}

/**
 * Runs a turn over SSE, handing each event to `onEvent` as it arrives (e.g. to answer a confirmation).
 * Resolves with every event once the stream ends, or with the error answer when the turn did not start.
 */
export async function streamTurn(
  base: string,
  sessionId: string,
  message: string,
  headers: Record<string, string> = {},
  onEvent: (e: SseEvent) => void | Promise<void> = () => undefined,
): Promise<{ status: number; events: SseEvent[]; body?: any }> {
  const res = await fetch(`${base}/sessions/${sessionId}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ message }),
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return { status: res.status, events: [], body: await res.json() };
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = block.match(/^event: (.+)$/m)?.[1];
      const data = block.match(/^data: (.+)$/m)?.[1];
      if (!name || !data) continue;
      const event = { event: name, data: JSON.parse(data) };
      events.push(event);
      await onEvent(event);
    }
  }
  return { status: res.status, events };
}

export const named = (events: readonly SseEvent[], name: string) =>
  events.filter((e) => e.event === name).map((e) => e.data);

/** One more agent-runtime worker on its own NATS connection, in the system's queue group. */
export async function startWorker(
  sys: AgentSystem,
  name: string,
  extraEnv: Record<string, string> = {},
): Promise<{ stop(): Promise<void> }> {
  // A worker of its own has no gateway in its process: it is told the address, as in a distributed deployment.
  const config = agentRuntimeService.loadConfig({ ALFRED_API_URL: sys.url, ...sys.env, ...extraEnv });
  const bus = await NatsBus.connect({
    url: testServers.natsUrl,
    name: `alfred-${name}`,
    subjectPrefix: sys.subjectPrefix,
    logger,
  });
  const hosted = await hostService(agentRuntimeService, config, {
    service: agentRuntimeService.name,
    instance: name,
    bus,
    logger,
  });
  return {
    async stop() {
      await hosted.stop();
      await bus.close(2_000);
    },
  };
}

/** Stops the agent-runtime the composite started, so only the workers a test adds take turns. */
export async function stopBuiltInWorker(sys: AgentSystem): Promise<void> {
  await sys.alfred.services.find((s) => s.name === agentRuntimeService.name)!.stop();
}
