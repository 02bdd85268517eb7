import { execFile, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OsSandbox, osSandboxUnavailable, SandboxPaths, sandboxUser, type OsLimits } from '../os/os-sandbox.js';
import { signalTree } from '../os/process-tree.js';
import { startApiProxy, type ApiProxy } from './api-proxy.js';

export interface BashSandboxOptions {
  /** `required` (default): bash runs only inside bubblewrap. `unsafe-off`: on the host, as the service's user. */
  readonly mode?: 'required' | 'unsafe-off';
  readonly bwrapPath?: string;
  readonly limits?: Partial<OsLimits>;
  readonly tmpfsMb?: number;
  /** The folder workspaces live in: checked once (sandboxes must be able to write there) before the first run. */
  readonly folder?: string;
  /** PATH for `unsafe-off` runs on the host; inside the sandbox PATH is fixed. */
  readonly hostPath?: string;
}

/** One command: where, as whom, with what, for how long. */
export interface BashRun {
  readonly command: string;
  /** The agent's workspace (real path): the only folder of the host the command sees (at /workspace), and its HOME. */
  readonly workspace: string;
  readonly tenant: string;
  /** The caller's variables (ALFRED_AGENT, ALFRED_SESSION_ID); the sandbox adds PATH, LANG, HOME, TMPDIR and the API's. Nothing is inherited from the service. */
  readonly env: Readonly<Record<string, string>>;
  /** Alfred's API as the service reaches it; inside, the same port on the sandbox's own loopback. */
  readonly apiUrl: string;
  readonly credential?: string;
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
  readonly signal: AbortSignal;
}

export interface BashOutcome {
  readonly output: string;
  readonly dropped: number;
  readonly code: number | null;
  readonly stopped?: 'timeout' | 'cancelled';
}

const RELAY = fileURLToPath(new URL(`../child/loopback-relay${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
const DEFAULT_LIMITS: OsLimits = { addressSpaceMb: 4096, processes: 256, cpuSeconds: 600, fileSizeBytes: 1024 ** 3, openFiles: 1024 };
/** The whole fixed environment inside (besides the caller's ALFRED_* variables): no host path, no service variable. */
const INSIDE_ENV = {
  PATH: `${SandboxPaths.node}:/usr/local/bin:/usr/bin:/bin`,
  LANG: 'C.UTF-8',
  HOME: SandboxPaths.workspace,
  TMPDIR: '/tmp',
} as const;

/** The agent's `bash` inside bubblewrap: its workspace, a read-only system, Alfred's API on its loopback, nothing else. */
export class BashSandbox {
  private readonly os?: OsSandbox;

  constructor(private readonly options: BashSandboxOptions = {}) {
    if (options.mode !== 'unsafe-off') this.os = new OsSandbox(options.bwrapPath);
  }

  get mode(): 'required' | 'unsafe-off' {
    return this.os ? 'required' : 'unsafe-off';
  }

  async run(run: BashRun): Promise<BashOutcome> {
    if (!this.os) return capture(spawnPlain(run, this.options.hostPath ?? INSIDE_ENV.PATH), run);
    const status = await OsSandbox.probe(this.options.bwrapPath, this.options.folder);
    if (!status.available) throw osSandboxUnavailable('running bash', status.reason);
    const owner = sandboxUser(run.tenant, 'bash');
    const socketDir = await mkdtemp(path.join(os.tmpdir(), 'alfred-bash-'));
    let proxy: ApiProxy | undefined;
    try {
      const socketPath = path.join(socketDir, 'api.sock');
      proxy = await startApiProxy({ socketPath, upstream: new URL(run.apiUrl), ...(run.credential ? { credential: run.credential } : {}), ...(owner ? { owner } : {}) });
      if (owner) await claim(run.workspace, owner);
      return await capture(this.spawnSandboxed(run, socketPath), run);
    } finally {
      await proxy?.close();
      await rm(socketDir, { recursive: true, force: true });
    }
  }

  private spawnSandboxed(run: BashRun, socketPath: string) {
    const port = insidePort(run.apiUrl);
    const seconds = Math.ceil(run.timeoutMs / 1000) + 1;
    const node = path.basename(process.execPath);
    const { file, args } = this.os!.command({
      command: [`${SandboxPaths.node}/${node}`, '--disable-sigusr1', `${SandboxPaths.code}/${path.basename(RELAY)}`, String(port), SandboxPaths.apiSocket, '--', 'bash', '-c', run.command],
      mounts: [
        { path: path.dirname(realpathSync(process.execPath)), mode: 'ro', target: SandboxPaths.node },
        { path: path.dirname(RELAY), mode: 'ro', target: SandboxPaths.code },
        { path: socketPath, mode: 'rw', target: SandboxPaths.apiSocket },
        { path: run.workspace, mode: 'rw', target: SandboxPaths.workspace },
      ],
      cwd: SandboxPaths.workspace,
      tenant: run.tenant,
      kind: 'bash',
      tmpfsMb: this.options.tmpfsMb ?? 256,
      limits: { ...DEFAULT_LIMITS, ...this.options.limits, cpuSeconds: Math.min(seconds, this.options.limits?.cpuSeconds ?? seconds) },
    });
    const env = { ...run.env, ...INSIDE_ENV, ALFRED_API_URL: `http://127.0.0.1:${port}`, ...(run.credential ? { ALFRED_API_KEY: run.credential } : {}) };
    return spawn(file, args, { cwd: '/', env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}

/** The operator's opt-out: bash on the host with a scrubbed environment, as before the OS layer. */
function spawnPlain(run: BashRun, hostPath: string) {
  const env = { ...run.env, PATH: hostPath, LANG: 'C.UTF-8', ALFRED_API_URL: run.apiUrl, HOME: run.workspace, TMPDIR: run.workspace, ...(run.credential ? { ALFRED_API_KEY: run.credential } : {}) };
  return spawn('bash', ['-c', run.command], { cwd: run.workspace, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Ports below 1024 need a capability the sandbox does not have: such an API is reached on 8080 inside. */
function insidePort(apiUrl: string): number {
  const url = new URL(apiUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return port >= 1024 ? port : 8080;
}

/**
 * Hands the workspace to the tenant's sandbox user (files the agent's write tool made belong to the service).
 * coreutils' `chown -R -P -h` walks without following symlinks, with directory file descriptors, so a command
 * racing it (another session of the same agent) cannot steer it outside the workspace.
 */
function claim(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  return new Promise((resolve) => execFile('chown', ['-R', '-P', '-h', `${owner.uid}:${owner.gid}`, '--', dir], { timeout: 30_000 }, () => resolve()));
}

/** Collects output up to the cap; kills the whole sandbox on timeout or cancel. */
function capture(child: ReturnType<typeof spawn>, run: BashRun): Promise<BashOutcome> {
  return new Promise((resolve) => {
    let output = '';
    let dropped = 0;
    let stopped: 'timeout' | 'cancelled' | undefined;
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      const room = run.maxOutputChars - output.length;
      if (room > 0) output += text.slice(0, room);
      dropped += Math.max(0, text.length - Math.max(room, 0));
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    const kill = (why: 'timeout' | 'cancelled') => {
      stopped ??= why;
      if (child.pid === undefined) return;
      signalTree(child.pid, 'SIGKILL');
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill('timeout'), run.timeoutMs);
    const onAbort = () => kill('cancelled');
    run.signal.addEventListener('abort', onAbort, { once: true });
    const finish = (code: number | null, error?: Error) => {
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onAbort);
      if (error) output += `could not run bash: ${error.message}`;
      resolve({ output, dropped, code: error ? null : code, ...(stopped ? { stopped } : {}) });
    };
    child.once('error', (err) => finish(null, err));
    child.once('close', (code) => finish(code));
  });
}
