import { execFile, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { Metrics } from '#metrics';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OsSandbox, osSandboxUnavailable, SandboxPaths, sandboxUser, type OsLimits } from '../os/os-sandbox.js';
import {
  measureDisk as measureNow,
  QUOTA_MARGIN_BYTES,
  quotaMessage,
  type DiskQuota,
  type QuotaNames,
  type QuotaState,
} from '../quota/disk-quota.js';
import { startApiProxy, type ApiProxy } from './api-proxy.js';
import { capture, type Captured, type RunningCheck } from './bash-capture.js';

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
  /** Disk quotas of workspaces (`<root>/<tenant>/<agent>`): per workspace and per tenant. */
  readonly quota?: DiskQuota;
}

/** One command: where, as whom, with what, for how long. */
export interface BashRun {
  readonly command: string;
  /** The agent's workspace (real path): the only folder of the host the command sees (at /workspace), and its HOME. */
  readonly workspace: string;
  readonly tenant: string;
  /**
   * The caller's variables (ALFRED_AGENT, ALFRED_SESSION_ID); the sandbox adds PATH, LANG, HOME, TMPDIR and the API's.
   * Nothing is inherited from the service.
   */
  readonly env: Readonly<Record<string, string>>;
  /** Alfred's API as the service reaches it; inside, the same port on the sandbox's own loopback. */
  readonly apiUrl: string;
  readonly credential?: string;
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
  readonly signal: AbortSignal;
}

export interface BashOutcome extends Captured {
  /** Said to the model when the workspace's disk quota refused or stopped writes. */
  readonly quotaNote?: string;
}

const RELAY = fileURLToPath(
  new URL(`../child/loopback-relay${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);
export const WORKSPACE_QUOTA: QuotaNames = { folder: 'this workspace', tenant: "this tenant's workspaces" };
/** How often a running command's workspace is measured (more rarely when walking it takes long). */
const QUOTA_CHECK_MS = 10;
const DEFAULT_LIMITS: OsLimits = {
  addressSpaceMb: 4096,
  processes: 256,
  cpuSeconds: 600,
  fileSizeBytes: 1024 ** 3,
  openFiles: 1024,
};
/** The whole fixed environment inside (besides the caller's ALFRED_* variables): no host path, no service variable. */
const INSIDE_ENV = {
  PATH: `${SandboxPaths.node}:/usr/local/bin:/usr/bin:/bin`,
  LANG: 'C.UTF-8',
  HOME: SandboxPaths.workspace,
  TMPDIR: '/tmp',
} as const;

/** The agent's `bash` inside bubblewrap: its workspace, a read-only system, Alfred's API on its loopback, no more. */
export class BashSandbox {
  private readonly os?: OsSandbox;

  constructor(private readonly options: BashSandboxOptions = {}) {
    if (options.mode !== 'unsafe-off') this.os = new OsSandbox(options.bwrapPath);
  }

  get mode(): 'required' | 'unsafe-off' {
    return this.os ? 'required' : 'unsafe-off';
  }

  async run(run: BashRun): Promise<BashOutcome> {
    const before = await this.options.quota?.state(path.dirname(run.workspace), run.workspace);
    const check = before && this.quotaCheck(run.workspace, before);
    if (!this.os)
      return this.withQuota(
        await capture(spawnPlain(run, this.options.hostPath ?? INSIDE_ENV.PATH), run, check),
        run,
        before,
      );
    const status = await OsSandbox.probe(this.options.bwrapPath, this.options.folder);
    if (!status.available) throw osSandboxUnavailable('running bash', status.reason);
    const owner = sandboxUser(run.tenant, 'bash');
    const socketDir = await mkdtemp(path.join(os.tmpdir(), 'alfred-bash-'));
    let proxy: ApiProxy | undefined;
    try {
      const socketPath = path.join(socketDir, 'api.sock');
      proxy = await startApiProxy({
        socketPath,
        upstream: new URL(run.apiUrl),
        ...(run.credential ? { credential: run.credential } : {}),
        ...(owner ? { owner } : {}),
      });
      if (owner) await claim(run.workspace, owner);
      return this.withQuota(await capture(this.spawnSandboxed(run, socketPath, before), run, check), run, before);
    } finally {
      await proxy?.close();
      await rm(socketDir, { recursive: true, force: true });
    }
  }

  /** While the command runs: stopped once the workspace grew past its remaining quota plus the margin. */
  private quotaCheck(workspace: string, before: QuotaState): RunningCheck {
    const limit = before.folder.used + before.remaining + QUOTA_MARGIN_BYTES;
    let everyMs = QUOTA_CHECK_MS;
    return {
      get everyMs() {
        return everyMs;
      },
      exceeded: async () => {
        const started = performance.now();
        const used = await measureNow(workspace);
        // A big folder takes long to walk: never spend more than a fifth of the time walking it.
        everyMs = Math.max(QUOTA_CHECK_MS, Math.round((performance.now() - started) * 4));
        return used > limit;
      },
    };
  }

  /** Counts what the call left and says so when the quota refused or stopped its writes; nothing is removed. */
  private async withQuota(outcome: Captured, run: BashRun, before: QuotaState | undefined): Promise<BashOutcome> {
    if (!before) return outcome;
    const after = await this.options.quota!.state(path.dirname(run.workspace), run.workspace);
    if (outcome.stopped === 'quota' || before.remaining === 0 || after.remaining === 0)
      Metrics.diskQuotaRefusals.inc({ area: 'workspace' });
    if (outcome.stopped === 'quota')
      return { ...outcome, quotaNote: `stopped: ${quotaMessage(after, WORKSPACE_QUOTA)}` };
    if (before.remaining === 0 || after.remaining === 0)
      return {
        ...outcome,
        quotaNote: `writes refused ("File too large") past the ${quotaMessage(after, WORKSPACE_QUOTA)}`,
      };
    return outcome;
  }

  private spawnSandboxed(run: BashRun, socketPath: string, quota: QuotaState | undefined) {
    const port = insidePort(run.apiUrl);
    const seconds = Math.ceil(run.timeoutMs / 1000) + 1;
    const node = path.basename(process.execPath);
    const limits = { ...DEFAULT_LIMITS, ...this.options.limits };
    const { file, args } = this.os!.command({
      command: [
        `${SandboxPaths.node}/${node}`,
        '--disable-sigusr1',
        `${SandboxPaths.code}/${path.basename(RELAY)}`,
        String(port),
        SandboxPaths.apiSocket,
        '--',
        ...bashCommand(run.command),
      ],
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
      limits: {
        ...limits,
        cpuSeconds: Math.min(seconds, this.options.limits?.cpuSeconds ?? seconds),
        fileSizeBytes: fileSizeFor(limits.fileSizeBytes, quota),
      },
    });
    const env = {
      ...run.env,
      ...INSIDE_ENV,
      ALFRED_API_URL: `http://127.0.0.1:${port}`,
      ...(run.credential ? { ALFRED_API_KEY: run.credential } : {}),
    };
    return spawn(file, args, { cwd: '/', env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}

/** The operator's opt-out: bash on the host with a scrubbed environment, as before the OS layer. */
function spawnPlain(run: BashRun, hostPath: string) {
  const env = {
    ...run.env,
    PATH: hostPath,
    LANG: 'C.UTF-8',
    ALFRED_API_URL: run.apiUrl,
    HOME: run.workspace,
    TMPDIR: run.workspace,
    ...(run.credential ? { ALFRED_API_KEY: run.credential } : {}),
  };
  const [shell, ...args] = bashCommand(run.command);
  return spawn(shell!, args, { cwd: run.workspace, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * `bash -c COMMAND` with SIGXFSZ ignored (an ignored signal stays ignored across exec): a write past the file size
 * limit (the quota's) then fails with "File too large" in the command's own output instead of killing it unexplained.
 */
function bashCommand(command: string): string[] {
  return ['bash', '-c', 'trap "" XFSZ; exec bash -c "$1"', 'bash', command];
}

/** The largest file a call may write: its remaining quota plus the margin, nothing once the quota is full. */
function fileSizeFor(limit: number, quota: QuotaState | undefined): number {
  if (!quota) return limit;
  return quota.remaining === 0 ? 0 : Math.min(limit, quota.remaining + QUOTA_MARGIN_BYTES);
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
  return new Promise((resolve) =>
    execFile('chown', ['-R', '-P', '-h', `${owner.uid}:${owner.gid}`, '--', dir], { timeout: 30_000 }, () => resolve()),
  );
}
