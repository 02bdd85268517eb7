import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { chown, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { checkPath, prlimitArgs, sandboxArgs, stageArgs, type OsLimits, type OsMount } from './bwrap-args.js';

export type { OsLimits, OsMount } from './bwrap-args.js';

/** Where things appear inside every sandbox: fixed paths, the same on every host, naming nothing of it. */
export const SandboxPaths = {
  /** Node's own folder (read-only): `/alfred/node/node`. */
  node: '/alfred/node',
  /** Alfred's in-sandbox code (the skill bootstrap, bash's API relay), read-only. */
  code: '/alfred/sandbox',
  /** The skill's own folder, read-only. */
  skill: '/skill',
  /** A skill's data roots: `/data/self`, `/data/shared/<name>`. */
  data: '/data',
  /** The agent's workspace: bash's working folder and HOME. */
  workspace: '/workspace',
  /** The unix socket of bash's one way out (Alfred's API). */
  apiSocket: '/run/alfred/api.sock',
} as const;

/** One sandboxed command: what it sees, where it starts, what bounds it, and whose it is. */
export interface OsSandboxSpec {
  readonly command: readonly string[];
  readonly mounts: readonly OsMount[];
  /** The working folder inside. */
  readonly cwd: string;
  /** Selects the sandbox's kernel user when the service runs as root, so one tenant's process count is its own. */
  readonly tenant: string;
  /** Separates the user ranges of different kinds of untrusted code (skills, bash). */
  readonly kind: 'skill' | 'bash';
  readonly limits: OsLimits;
  readonly tmpfsMb: number;
}

/** What to spawn (as the service's own user): the program and its arguments. */
export interface OsCommand {
  readonly file: string;
  readonly args: string[];
}

const UID_BASE = { skill: 2_000_000, bash: 3_000_000 } as const;
const UID_SPAN = 900_000;
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

export const OS_SANDBOX_FIX =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; a root service also needs util-linux's setpriv) " +
  "and allow user namespaces; in a container, give the service the grants of docker-compose.yml's " +
  '`x-sandboxed` block ' +
  '(SYS_ADMIN, SETUID, SETGID and SETPCAP for its entrypoint, the seccomp profile docker/seccomp/sandbox.json, ' +
  'apparmor=unconfined) and start it through docker/sandbox-entrypoint.sh; never privileged. Only if you accept ' +
  'running untrusted code without an OS boundary, set ALFRED_OS_SANDBOX=unsafe-off.';

/** Whether bubblewrap can start here, and why not. */
export interface OsSandboxStatus {
  readonly available: boolean;
  readonly reason?: string;
}

/**
 * Bubblewrap around untrusted code: its own user, network (loopback only), PID, IPC, UTS and mount namespaces, a
 * read-only system, only the folders the spec lists (at fixed paths), no capabilities, a new session (no terminal to
 * inject into), killed with its parent, under prlimit's kernel limits and, when the service is root, a per-tenant
 * kernel user.
 */
export class OsSandbox {
  private static readonly probes = new Map<string, Promise<OsSandboxStatus>>();
  private readonly bwrap: string;

  constructor(bwrapPath = 'bwrap') {
    this.bwrap = resolveProgram(bwrapPath);
  }

  /**
   * Tries the whole sandbox once per process (and folder): the staging step when root, Node from its folder, and,
   * given a folder, writing to it as a sandbox's user does. The reason names what failed and the fix.
   */
  static probe(bwrapPath = 'bwrap', folder?: string): Promise<OsSandboxStatus> {
    const key = `${bwrapPath}\0${folder ?? ''}`;
    let probed = OsSandbox.probes.get(key);
    if (!probed) {
      probed = folder
        ? OsSandbox.probe(bwrapPath).then((base) => (base.available ? probeFolder(bwrapPath, folder) : base))
        : probeBase(bwrapPath);
      OsSandbox.probes.set(key, probed);
    }
    return probed;
  }

  /**
   * The argv that runs `spec.command` inside the sandbox. The limits are set by prlimit *inside* bubblewrap's user
   * namespace: the kernel then counts RLIMIT_NPROC for this sandbox's namespace alone. Set outside, it would count
   * every task of the service's user on the machine — in containers, every other container running as that user —
   * and a sandbox would fail to start ("Creating new namespace failed: Resource temporarily unavailable") whenever
   * those exceed the limit, or would get the headroom other processes happen to leave it.
   */
  command(spec: OsSandboxSpec): OsCommand {
    const tail = ['--', ...prlimitArgs(spec.limits), '--', ...spec.command];
    const user = sandboxUser(spec.tenant, spec.kind);
    if (!user) {
      for (const mount of spec.mounts) checkPath(mount.path);
      const sources = spec.mounts.map((mount) => mount.path);
      return { file: this.bwrap, args: [...sandboxArgs(spec.mounts, sources, spec.cwd, spec.tmpfsMb), ...tail] };
    }
    const stage = stageArgs(spec.mounts, user, resolveProgram('setpriv'), this.bwrap);
    return {
      file: this.bwrap,
      args: [...stage.args, ...sandboxArgs(spec.mounts, stage.sources, spec.cwd, spec.tmpfsMb), ...tail],
    };
  }
}

/**
 * A root service runs each tenant's sandboxes as a kernel user of its own (a hash of the tenant in a range per
 * kind): its processes belong to that user on the host too. A service that is not root keeps its own user; either
 * way the process limit counts the sandbox's own user namespace (see `command`).
 */
export function sandboxUser(tenant: string, kind: OsSandboxSpec['kind']): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = UID_BASE[kind] + (createHash('sha256').update(tenant).digest().readUInt32BE(0) % UID_SPAN);
  return { uid: id, gid: id };
}

/** The error every untrusted-code entry point gives when the OS layer is required but cannot start. */
export function osSandboxUnavailable(what: string, reason: string | undefined): AlfredError {
  return new AlfredError(
    ErrorCode.ServiceUnavailable,
    `${what} refused: ${reason ?? 'the OS sandbox is unavailable'}. To fix: ${OS_SANDBOX_FIX}`,
  );
}

/** An absolute program path: the sandbox's environment has no PATH to search. */
function resolveProgram(name: string): string {
  if (name.includes('/')) return name;
  return SYSTEM_BIN.map((dir) => path.join(dir, name)).find((file) => existsSync(file)) ?? name;
}

const PROBE_LIMITS: OsLimits = {
  addressSpaceMb: 4096,
  processes: 64,
  cpuSeconds: 10,
  fileSizeBytes: 1024 * 1024,
  openFiles: 64,
};

function probeBase(bwrapPath: string): Promise<OsSandboxStatus> {
  const sandbox = new OsSandbox(bwrapPath);
  const nodeDir = path.dirname(realpathSync(process.execPath));
  const { file, args } = sandbox.command({
    command: [`${SandboxPaths.node}/${path.basename(process.execPath)}`, '-e', '0'],
    mounts: [{ path: nodeDir, mode: 'ro', target: SandboxPaths.node }],
    cwd: '/',
    tenant: 'probe',
    kind: 'skill',
    tmpfsMb: 1,
    limits: PROBE_LIMITS,
  });
  return run(file, args).then((failure) => {
    if (failure === undefined) return { available: true };
    if (failure.startsWith('ENOENT'))
      return { available: false, reason: `bubblewrap cannot start a sandbox here (${file} is not installed)` };
    if (/setpriv/.test(failure))
      return {
        available: false,
        reason: `a root service needs util-linux's setpriv to start sandboxes as their tenants' users (${failure})`,
      };
    return { available: false, reason: `bubblewrap cannot start a sandbox here (${failure})` };
  });
}

/** Writes into `folder` from inside a sandbox, as the sandbox's user would: the folder must be usable so. */
async function probeFolder(bwrapPath: string, folder: string): Promise<OsSandboxStatus> {
  const dir = path.join(folder, `.sandbox-check-${randomUUID()}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const user = sandboxUser('probe', 'bash');
    if (user) await chown(dir, user.uid, user.gid);
    const { file, args } = new OsSandbox(bwrapPath).command({
      command: ['/bin/sh', '-c', 'echo ok > /workspace/check && rm /workspace/check'],
      mounts: [{ path: realpathSync(dir), mode: 'rw', target: SandboxPaths.workspace }],
      cwd: SandboxPaths.workspace,
      tenant: 'probe',
      kind: 'bash',
      tmpfsMb: 1,
      limits: PROBE_LIMITS,
    });
    const failure = await run(file, args);
    if (failure === undefined) return { available: true };
    return {
      available: false,
      reason:
        `sandboxes cannot write to ${folder} (${failure}): give Alfred a data folder on a local file system ` +
        'that allows chown (not NFS with root_squash, not vfat)',
    };
  } catch (err) {
    return {
      available: false,
      reason:
        `sandboxes cannot use ${folder} (${(err as Error).message}): give Alfred a data folder it can ` +
        `write to and chown in`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function run(file: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { env: {}, timeout: 10_000, cwd: '/' }, (err, _out, stderr) => {
      if (!err) return resolve(undefined);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return resolve(`ENOENT: ${file}`);
      resolve((stderr.trim() || err.message).split('\n')[0]);
    });
  });
}
