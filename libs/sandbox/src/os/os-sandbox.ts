import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

/** A folder (or file) made visible inside the sandbox at the same path; `rw` only where the code may write. */
export interface OsMount {
  readonly path: string;
  readonly mode: 'ro' | 'rw';
  /** Where it appears inside; the same path when absent. */
  readonly target?: string;
}

/** Kernel-enforced limits (setrlimit through prlimit), applied to every process in the sandbox. */
export interface OsLimits {
  /** Virtual address space per process (RLIMIT_AS). */
  readonly addressSpaceMb: number;
  /** Processes and threads of the sandbox's user (RLIMIT_NPROC). */
  readonly processes: number;
  /** CPU seconds per process (RLIMIT_CPU): SIGXCPU, then SIGKILL. */
  readonly cpuSeconds: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  readonly fileSizeMb: number;
  readonly openFiles: number;
}

/** One sandboxed command: what it sees, where it starts, what bounds it, and whose it is. */
export interface OsSandboxSpec {
  readonly command: readonly string[];
  readonly mounts: readonly OsMount[];
  readonly cwd: string;
  /** Selects the sandbox's kernel user when the service runs as root, so one tenant's process count is its own. */
  readonly tenant: string;
  /** Separates the user ranges of different kinds of untrusted code (skills, bash). */
  readonly kind: 'skill' | 'bash';
  readonly limits: OsLimits;
  readonly tmpfsMb: number;
}

/** What to spawn: the program, its arguments, and the kernel user to become (root services only). */
export interface OsCommand {
  readonly file: string;
  readonly args: string[];
  readonly uid?: number;
  readonly gid?: number;
}

/** The system folders every sandbox sees read-only (symlinks such as /bin -> usr/bin are recreated, not followed). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** util-linux's prlimit, run inside the sandbox from the read-only system (Debian: /usr/bin/prlimit). */
const PRLIMIT = existsSync('/usr/bin/prlimit') ? '/usr/bin/prlimit' : '/bin/prlimit';
/** The parts of /etc programs need to start (loader cache, alternatives, certificates); no passwd, no hosts. */
const ETC_PATHS = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime'];
const UID_BASE = { skill: 2_000_000, bash: 3_000_000 } as const;
const UID_SPAN = 900_000;
const INSIDE_ID = '65534';

export const OS_SANDBOX_FIX =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow user namespaces; in a container, run the ' +
  'service privileged (Compose: `privileged: true`; docker run: --cap-add SYS_ADMIN --security-opt seccomp=unconfined ' +
  '--security-opt apparmor=unconfined --security-opt systempaths=unconfined; see docker-compose.yml). Only if you accept running untrusted code without an OS boundary, set ALFRED_OS_SANDBOX=unsafe-off.';

/** Whether bubblewrap can start here, and why not. */
export interface OsSandboxStatus {
  readonly available: boolean;
  readonly reason?: string;
}

/**
 * Bubblewrap around untrusted code: its own user, network (loopback only), PID, IPC, UTS and mount namespaces, a
 * read-only system, only the folders the spec lists, no capabilities, a new session (no terminal to inject into),
 * killed with its parent, under prlimit's kernel limits and, when the service is root, a per-tenant kernel user.
 */
export class OsSandbox {
  private static probed?: Promise<OsSandboxStatus>;

  constructor(private readonly bwrapPath = 'bwrap') {}

  /** Tries bubblewrap once per process with the namespaces every sandbox uses. */
  static probe(bwrapPath = 'bwrap'): Promise<OsSandboxStatus> {
    OsSandbox.probed ??= new Promise((resolve) => {
      const sandbox = new OsSandbox(bwrapPath);
      const { file, args, uid, gid } = sandbox.command({
        command: ['/bin/sh', '-c', 'exit 0'], mounts: [], cwd: '/', tenant: 'probe', kind: 'skill', tmpfsMb: 1,
        limits: { addressSpaceMb: 1024, processes: 64, cpuSeconds: 5, fileSizeMb: 1, openFiles: 64 },
      });
      execFile(file, args, { env: {}, timeout: 10_000, ...(uid === undefined ? {} : { uid, gid }) }, (err, _out, stderr) => {
        if (!err) return resolve({ available: true });
        const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${file} is not installed` : (stderr.trim() || err.message).split('\n')[0];
        resolve({ available: false, reason: `bubblewrap cannot start a sandbox here (${why})` });
      });
    });
    return OsSandbox.probed;
  }

  /**
   * The argv that runs `spec.command` inside the sandbox. The limits are set by prlimit *inside* bubblewrap's user
   * namespace: the kernel then counts RLIMIT_NPROC for this sandbox's namespace alone. Set outside, it would count
   * every task of the service's user on the machine — in containers, every other container running as that user —
   * and a sandbox would fail to start ("Creating new namespace failed: Resource temporarily unavailable") whenever
   * those exceed the limit, or would get the headroom other processes happen to leave it.
   */
  command(spec: OsSandboxSpec): OsCommand {
    const user = sandboxUser(spec.tenant, spec.kind);
    const { limits } = spec;
    const prlimit = [
      PRLIMIT,
      `--as=${limits.addressSpaceMb * 1024 * 1024}`,
      `--nproc=${limits.processes}`,
      `--cpu=${limits.cpuSeconds}`,
      `--fsize=${limits.fileSizeMb * 1024 * 1024}`,
      `--nofile=${limits.openFiles}`,
      '--core=0',
    ];
    const args = [...bwrapArgs(spec), '--', ...prlimit, '--', ...spec.command];
    return { file: this.bwrapPath, args, ...(user ?? {}) };
  }
}

function bwrapArgs(spec: OsSandboxSpec): string[] {
  const args = [
    '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    '--uid', INSIDE_ID, '--gid', INSIDE_ID, '--hostname', 'sandbox',
    '--proc', '/proc', '--dev', '/dev', '--size', String(spec.tmpfsMb * 1024 * 1024), '--tmpfs', '/tmp',
  ];
  for (const dir of SYSTEM_PATHS) args.push(...systemMount(dir));
  for (const file of ETC_PATHS) args.push('--ro-bind-try', file, file);
  for (const mount of spec.mounts) {
    if (mount.path.includes('\0')) throw new AlfredError(ErrorCode.BadRequest, 'unusable sandbox path');
    args.push(mount.mode === 'rw' ? '--bind' : '--ro-bind', mount.path, mount.target ?? mount.path);
  }
  args.push('--chdir', spec.cwd);
  return args;
}

function systemMount(dir: string): string[] {
  try {
    const info = lstatSync(dir);
    if (info.isSymbolicLink()) return ['--symlink', readlinkSync(dir), dir];
    return info.isDirectory() ? ['--ro-bind', dir, dir] : [];
  } catch {
    return [];
  }
}

/**
 * A root service runs each tenant's sandboxes as a kernel user of its own (a hash of the tenant in a range per
 * kind): its processes belong to that user on the host too. A service that is not root keeps its own user; either way the
 * process limit counts the sandbox's own user namespace (see `command`).
 */
export function sandboxUser(tenant: string, kind: OsSandboxSpec['kind']): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = UID_BASE[kind] + (createHash('sha256').update(tenant).digest().readUInt32BE(0) % UID_SPAN);
  return { uid: id, gid: id };
}

/** The error every untrusted-code entry point gives when the OS layer is required but cannot start. */
export function osSandboxUnavailable(what: string, reason: string | undefined): AlfredError {
  return new AlfredError(ErrorCode.ServiceUnavailable, `${what} refused: ${reason ?? 'the OS sandbox is unavailable'}. To fix: ${OS_SANDBOX_FIX}`);
}
