// Runs inside the sandboxed child under Node's permission model. Node loads this file with type
// stripping, so: erasable TypeScript only, and no relative imports (tsc's `.js` specifiers would not
// resolve next to the `.ts` source). Node 24 has no network permission, so network access is removed
// here before the skill is imported: blocked builtins, a process facade, and no raw stream handles.
import { Console } from 'node:console';
import { constants as fsConstants, writeSync } from 'node:fs';
import { mkdir, open, readFile as fsReadFile, realpath, stat } from 'node:fs/promises';
import { isBuiltin, registerHooks } from 'node:module';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface RunMessage {
  type: 'run';
  entry: string;
  /** The skill's own (read-only) folder: the only place modules may be imported from. */
  skillDir: string;
  /** The variables the manifest grants; anything else in the environment (bubblewrap's PWD) is not shown. */
  envNames: string[];
  args: Record<string, unknown>;
  roots: Record<string, string>;
  readable: string[];
  writable: string[];
  maxResultBytes: number;
  maxFileBytes: number;
  /** Written alone on fd 1, 2 and 4 after the run, so the host knows where this run's output ends. */
  nonce: string;
  /** Stay up for the next run of the same skill version (warm pool) instead of exiting. */
  keepAlive: boolean;
}

interface ReserveReply {
  type: 'reserve-reply';
  id: number;
  error?: string;
}

interface FetchReply {
  type: 'fetch-reply';
  id: number;
  error?: string;
  status?: number;
  statusText?: string;
  url?: string;
  headers?: [string, string][];
  body?: string;
}

interface FetchInit {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: string | Uint8Array | ArrayBuffer;
}

/**
 * Builtins without I/O reach; everything else (fs, net, http, dns, child_process, worker_threads, module, vm, v8, ...)
 * is refused.
 */
const SAFE_BUILTINS = [
  'assert',
  'assert/strict',
  'buffer',
  'crypto',
  'events',
  'path',
  'path/posix',
  'querystring',
  'stream',
  'stream/promises',
  'stream/web',
  'string_decoder',
  'timers',
  'timers/promises',
  'url',
  'util',
  'util/types',
  'zlib',
];

const STDOUT_FD = 1;
const STDERR_FD = 2;
const LOG_FD = 4;
const realProcess = process;
const send = realProcess.send?.bind(realProcess);
// Captured now: the skill may replace prototype methods before the resolve hook runs.
const hasOwn = Object.hasOwn;
const apply = Reflect.apply;
const startsWith = String.prototype.startsWith;
const safe: Record<string, true> = Object.create(null);
for (const name of SAFE_BUILTINS) {
  safe[name] = true;
  safe[`node:${name}`] = true;
}
Object.freeze(safe);

const pendingFetches = new Map<number, { resolve: (reply: FetchReply) => void }>();
const pendingReserves = new Map<number, (reply: ReserveReply) => void>();
let nextFetchId = 1;
let current: RunMessage | undefined;
let lockedDown = false;
let exiting = false;
/** Handles and requests alive before the first run; a run that leaves more behind (a timer) ends the process. */
let baseline: Record<string, number> = Object.create(null);

if (!send) realProcess.exit(70);
realProcess.on('disconnect', () => realProcess.exit(71));
realProcess.on('uncaughtException', (err) =>
  finish({ type: 'threw', message: `uncaught exception: ${describe(err)}` }),
);
realProcess.on('unhandledRejection', (err) =>
  finish({ type: 'threw', message: `unhandled rejection: ${describe(err)}` }),
);
realProcess.on('message', (message: RunMessage | FetchReply | ReserveReply) => {
  if (message.type === 'fetch-reply') pendingFetches.get(message.id)?.resolve(message);
  else if (message.type === 'reserve-reply') pendingReserves.get(message.id)?.(message);
  else if (message.type === 'run' && !current) {
    current = message;
    void run(message);
  }
});

async function run(message: RunMessage): Promise<void> {
  if (!lockedDown) {
    lockDown(message.skillDir, message.envNames);
    baseline = activeResources();
  }
  lockedDown = true;
  const ctx = buildContext(message);
  try {
    const mod = (await import(pathToFileURL(message.entry).href)) as { execute?: unknown };
    if (typeof mod.execute !== 'function') throw new Error('execute.ts must export a function execute(args, ctx)');
    const result: unknown = await mod.execute(message.args, ctx);
    const json = JSON.stringify(result === undefined ? null : result);
    if (json.length > message.maxResultBytes) throw new Error(`result exceeds ${message.maxResultBytes} bytes`);
    finish({ type: 'result', json });
  } catch (err) {
    finish({ type: 'threw', message: describe(err) });
  }
}

function finish(message: { type: 'result'; json: string } | { type: 'threw'; message: string }): void {
  const run = current;
  // An error between runs of a kept-alive process (a skill's stray timer) ends the process.
  if (!run) return void realProcess.exit(72);
  if (!run.keepAlive) {
    if (exiting) return;
    exiting = true;
    return void send!(message, undefined, {}, () => realProcess.exit(0));
  }
  current = undefined;
  send!(message);
  // The end of the run's output and the verdict on keeping the process wait for the event loop's next turn: a skill
  // that returned while a microtask or nextTick loop spins never yields one, so its process is never reused.
  setImmediate(() => {
    const marker = `\0${run.nonce}\n`;
    for (const fd of [STDOUT_FD, STDERR_FD, LOG_FD]) writeOut(fd, marker);
    // Nothing may run between executions: a process with a timer, an interval or I/O still pending is not kept.
    send!({ type: 'idle', reusable: !lingers() });
  });
}

function activeResources(): Record<string, number> {
  const counts: Record<string, number> = Object.create(null);
  for (const name of realProcess.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

function lingers(): boolean {
  const now = activeResources();
  for (const name of Object.keys(now)) if (now[name]! > (baseline[name] ?? 0)) return true;
  return false;
}

/**
 * Module rules for skill code: builtins only from the I/O-free list; files only from the skill's own read-only
 * folder (never from a data root it can write, so it cannot write a module and import it); ES modules and JSON
 * only (CommonJS would hand the skill `module` and through it `Module.registerHooks`); no addons or wasm.
 */
function lockDown(skillDir: string, skillEnvNames: string[]): void {
  const inside = `${skillDir}${path.sep}`;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (hasOwn(safe, specifier)) return nextResolve(specifier, context);
      if (isBuiltin(specifier)) throw new Error(`module ${specifier} is not available to skills`);
      const resolved = nextResolve(specifier, context);
      if (apply(startsWith, resolved.url, ['node:'])) throw new Error(`module ${specifier} is not available to skills`);
      if (apply(startsWith, resolved.url, ['file:']) && !apply(startsWith, fileURLToPath(resolved.url), [inside])) {
        throw new Error(`module ${specifier} is outside the skill's folder; skills import only their own files`);
      }
      if (!apply(startsWith, resolved.url, ['file:']) && !apply(startsWith, resolved.url, ['data:'])) {
        throw new Error(`module ${specifier} is not available to skills`);
      }
      return resolved;
    },
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      const format = String(loaded.format);
      if (format === 'module' || format === 'module-typescript' || format === 'json' || format === 'builtin')
        return loaded;
      if (format.startsWith('commonjs'))
        throw new Error(
          `skills are ES modules: ${displayName(url)} is CommonJS (use import/export, not require/module.exports)`,
        );
      throw new Error(`${displayName(url)} is a ${format} module, which skills may not load`);
    },
  });
  const stdout = forwardingStream('stdout');
  const stderr = forwardingStream('stderr');
  const facade = Object.freeze({
    env: grantedEnv(skillEnvNames),
    argv: Object.freeze([] as string[]),
    platform: realProcess.platform,
    arch: realProcess.arch,
    version: realProcess.version,
    versions: Object.freeze({ ...realProcess.versions }),
    hrtime: realProcess.hrtime,
    nextTick: realProcess.nextTick,
    memoryUsage: () => realProcess.memoryUsage(),
    uptime: () => realProcess.uptime(),
    cwd: () => '/',
    stdout,
    stderr,
  });
  // The real process object reaches signals (kill, _debugProcess), raw pipe handles and bindings.
  for (const name of ['process', 'console', 'fetch', 'WebSocket', 'EventSource']) {
    Reflect.deleteProperty(globalThis, name);
  }
  Object.defineProperty(globalThis, 'process', {
    value: facade,
    writable: false,
    configurable: false,
    enumerable: false,
  });
  Object.defineProperty(globalThis, 'console', {
    value: new Console({ stdout, stderr }),
    writable: true,
    configurable: true,
  });
}

function grantedEnv(names: string[]): Readonly<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const name of names) if (typeof realProcess.env[name] === 'string') env[name] = realProcess.env[name]!;
  return Object.freeze(env);
}

function displayName(url: string): string {
  return apply(startsWith, url, ['file:']) ? path.basename(fileURLToPath(url)) : url.slice(0, 64);
}

function forwardingStream(stream: 'stdout' | 'stderr'): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      writeOut(stream === 'stdout' ? STDOUT_FD : STDERR_FD, String(chunk));
      callback();
    },
  });
}

/**
 * Output is written synchronously to blocking pipes (fd 1, 2 and 4 for ctx.log): a skill printing in a
 * tight loop blocks until the host has read, and the host kills it past the hard cap. IPC sends would
 * instead queue in this process without limit while its loop never yields.
 */
function writeOut(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}

function buildContext(message: RunMessage) {
  const env = grantedEnv(message.envNames);
  return Object.freeze({
    env,
    log: (line: unknown) => writeOut(LOG_FD, `${JSON.stringify(String(line).slice(0, 8192))}\n`),
    fetch: (input: string | URL, init: FetchInit = {}) => remoteFetch(String(input), init),
    readFile: async (file: string, encoding: 'utf8' | 'bytes' = 'utf8') => {
      const target = await resolveInRoot(message, file, 'read');
      const info = await stat(target);
      if (info.size > message.maxFileBytes) throw new Error(`${file} is larger than ${message.maxFileBytes} bytes`);
      const bytes = await fsReadFile(target);
      return encoding === 'bytes' ? new Uint8Array(bytes) : bytes.toString('utf8');
    },
    writeFile: async (file: string, content: string | Uint8Array) => {
      const target = await resolveInRoot(message, file, 'write');
      const bytes = typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength;
      const existing = await stat(target).then(
        (info) => info.size,
        () => 0,
      );
      if (bytes > existing) await reserve(bytes - existing);
      const handle = await open(
        target,
        fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW,
        0o640,
      );
      try {
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
      // What a smaller rewrite freed is given back once it is really free.
      if (bytes < existing) await reserve(bytes - existing);
    },
  });
}

/** Maps `<root>/<relative path>` to a real path inside that root, refusing escapes by `..` or symlinks. */
async function resolveInRoot(message: RunMessage, file: unknown, mode: 'read' | 'write'): Promise<string> {
  if (typeof file !== 'string' || file.includes('\0')) throw new Error('file paths must be strings');
  const normalized = path.posix.normalize(file);
  const parts = normalized.split('/');
  const rootName = parts[0] === 'shared' ? parts.slice(0, 2).join('/') : parts[0]!;
  const rest = parts.slice(rootName.split('/').length).join('/');
  if (path.posix.isAbsolute(file) || normalized.startsWith('..') || !rest) {
    throw new Error(`paths look like <root>/<file> (for example self/notes.txt); got ${JSON.stringify(file)}`);
  }
  const allowed = mode === 'read' ? message.readable : message.writable;
  const rootDir = message.roots[rootName];
  if (!rootDir || !allowed.includes(rootName)) throw new Error(`no ${mode} access to root "${rootName}"`);
  const candidate = path.join(rootDir, rest);
  if (mode === 'write') await mkdir(path.dirname(candidate), { recursive: true });
  // Errors name the skill's own path, never the server's (a link to a file the sandbox does not show is missing).
  const real = await (mode === 'read'
    ? realpath(candidate)
    : realpath(path.dirname(candidate)).then((dir) => path.join(dir, path.basename(candidate)))
  ).catch(() => {
    throw new Error(`${file} does not exist`);
  });
  const relative = path.relative(rootDir, real);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new Error(`${file} resolves outside its root "${rootName}"`);
  }
  return real;
}

/**
 * Asks the host for room in the tenant's disk quota before a write grows the skill's data (throws when refused); a
 * negative count gives room back.
 */
async function reserve(bytes: number): Promise<void> {
  const id = nextFetchId++;
  const reply = await new Promise<ReserveReply>((resolve) => {
    pendingReserves.set(id, resolve);
    send!({ type: 'reserve', id, bytes });
  });
  pendingReserves.delete(id);
  if (reply.error !== undefined) throw new Error(reply.error);
}

async function remoteFetch(url: string, init: FetchInit) {
  const id = nextFetchId++;
  const headers = Object.fromEntries(new Headers(init.headers ?? {}));
  const body = encodeBody(init.body);
  const reply = await new Promise<FetchReply>((resolve) => {
    pendingFetches.set(id, { resolve });
    send!({ type: 'fetch', id, request: { url, method: init.method ?? 'GET', headers, body } });
  });
  pendingFetches.delete(id);
  if (reply.error !== undefined) throw new Error(reply.error);
  const bytes = Buffer.from(reply.body ?? '', 'base64');
  const status = reply.status ?? 0;
  return Object.freeze({
    url: reply.url ?? url,
    status,
    statusText: reply.statusText ?? '',
    ok: status >= 200 && status < 300,
    headers: new Headers(reply.headers ?? []),
    text: async () => bytes.toString('utf8'),
    json: async (): Promise<unknown> => JSON.parse(bytes.toString('utf8')),
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    bytes: async () => new Uint8Array(bytes),
  });
}

function encodeBody(body: FetchInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8').toString('base64');
  if (body instanceof Uint8Array || body instanceof ArrayBuffer)
    return Buffer.from(body as Uint8Array).toString('base64');
  throw new TypeError('ctx.fetch bodies must be strings, Uint8Arrays or ArrayBuffers');
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  try {
    return typeof err === 'string' ? err : JSON.stringify(err);
  } catch {
    return String(err);
  }
}
