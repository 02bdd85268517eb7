import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runCurl } from '../readme-examples.js';

const run = promisify(execFile);

/** What docker/compose-e2e.sh hands the stack suites: the published ports, the key, the compose command line. */
export const stack = {
  url: process.env.ALFRED_STACK_URL!,
  key: process.env.ALFRED_STACK_KEY!,
  prometheus: process.env.ALFRED_STACK_PROMETHEUS,
  docker: process.env.ALFRED_STACK_DOCKER ?? 'docker',
  imageBytes: Number(process.env.ALFRED_STACK_IMAGE_BYTES ?? 0),
  modelPort: Number(process.env.ALFRED_STACK_MODEL_PORT ?? 0),
  modelKey: process.env.ALFRED_STACK_MODEL_KEY ?? '',
};
const COMPOSE = (process.env.ALFRED_STACK_COMPOSE ?? '').split(' ').filter(Boolean);

/** `describe` when docker/compose-e2e.sh started a stack, skipped otherwise (these suites never run in `npm test`). */
export const describeStack = process.env.ALFRED_STACK_URL ? describe : describe.skip;

/** docker-compose with the script's project, env file and compose file. */
export const compose = (...args: string[]) =>
  run(COMPOSE[0]!, [...COMPOSE.slice(1), ...args], { maxBuffer: 16 * 1024 * 1024 });

/** The docker CLI of the engine the stack runs on. */
export const docker = (...args: string[]) => run(stack.docker, args, { maxBuffer: 16 * 1024 * 1024 });

/** The container ids of a compose service, one per replica. */
export async function containersOf(service: string): Promise<string[]> {
  return (await compose('ps', '-q', service)).stdout.split('\n').filter(Boolean);
}

/** curl on the host against the published port, with the key. */
export const curl = (args: readonly string[]) => runCurl(args, [`Authorization: Bearer ${stack.key}`]);

export const api = (method: string, path: string, body?: unknown) => {
  const json = body === undefined ? [] : ['-H', 'Content-Type: application/json', '-d', JSON.stringify(body)];
  return curl(['curl', '-X', method, `${stack.url}${path}`, ...json]);
};

/** One server-sent event of a turn. */
export interface TurnEvent {
  readonly event: string;
  readonly data: any;
}

/** A turn over SSE through the published API: every event once the stream ends, or the error answer. */
export async function streamTurn(
  sessionId: string,
  message: string,
): Promise<{ status: number; events: TurnEvent[]; body?: unknown }> {
  const res = await fetch(`${stack.url}/sessions/${sessionId}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${stack.key}` },
    body: JSON.stringify({ message }),
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: res.status, events: [], body: await res.json() };
  }
  const blocks = (await res.text()).split('\n\n');
  const events = blocks
    .map((block) => ({ event: /^event: (.+)$/m.exec(block)?.[1], data: /^data: (.+)$/m.exec(block)?.[1] }))
    .filter((e): e is { event: string; data: string } => e.event !== undefined && e.data !== undefined)
    .map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
  return { status: res.status, events };
}

export const named = (events: readonly TurnEvent[], name: string) =>
  events.filter((e) => e.event === name).map((e) => e.data);
