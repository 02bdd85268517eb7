import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

/** A host folder (or file) shown inside the sandbox at a fixed path; `rw` only where the code may write. */
export interface OsMount {
  /** The real host path. */
  readonly path: string;
  readonly mode: 'ro' | 'rw';
  /** Where it appears inside (`/workspace`, `/skill`, …): never a host path, so nothing inside names the host's. */
  readonly target: string;
}

/** Kernel-enforced limits (setrlimit through prlimit), applied to every process in the sandbox. */
export interface OsLimits {
  /** Virtual address space per process (RLIMIT_AS). */
  readonly addressSpaceMb: number;
  /** Processes and threads of the sandbox's user (RLIMIT_NPROC). */
  readonly processes: number;
  /** CPU seconds per process (RLIMIT_CPU): SIGXCPU, then SIGKILL. */
  readonly cpuSeconds: number;
  /** Largest file a process may write (RLIMIT_FSIZE); 0 refuses every byte written (SIGXFSZ / EFBIG). */
  readonly fileSizeBytes: number;
  readonly openFiles: number;
}

/** The system folders every sandbox sees read-only (symlinks such as /bin -> usr/bin are recreated, not followed). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The parts of /etc programs need to start (loader cache, alternatives, certificates); no passwd, no hosts. */
const ETC_PATHS = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/localtime',
];
/** util-linux's prlimit, run inside the sandbox from the read-only system (Debian: /usr/bin/prlimit). */
const PRLIMIT = existsSync('/usr/bin/prlimit') ? '/usr/bin/prlimit' : '/bin/prlimit';
const INSIDE_ID = '65534';
/** Where the staging namespace shows each source to the sandbox's user: a fresh tmpfs only that namespace sees. */
const STAGE_DIR = '/tmp';

/** bubblewrap's arguments for the sandbox itself: namespaces, a read-only system, the mounts at their targets. */
export function sandboxArgs(
  mounts: readonly OsMount[],
  sources: readonly string[],
  cwd: string,
  tmpfsMb: number,
): string[] {
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--uid',
    INSIDE_ID,
    '--gid',
    INSIDE_ID,
    '--hostname',
    'sandbox',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(tmpfsMb * 1024 * 1024),
    '--tmpfs',
    '/tmp',
  ];
  for (const dir of SYSTEM_PATHS) args.push(...systemMount(dir));
  for (const file of ETC_PATHS) args.push('--ro-bind-try', file, file);
  mounts.forEach((mount, i) => {
    args.push(mount.mode === 'rw' ? '--bind' : '--ro-bind', sources[i]!, mount.target);
  });
  args.push('--chdir', cwd);
  return args;
}

/**
 * A root service's sandbox runs as a tenant's kernel user, who may not pass through the operator's folders (a
 * checkout or data folder under `/root` or a `mktemp -d` folder is 0700). So a first bubblewrap, still root, only
 * opens a private mount namespace, shows each source on a fresh tmpfs there, and drops to the tenant's user
 * (setpriv) to start the sandbox from those places. The host's mounts are untouched; the sandbox's user never
 * walks a host folder.
 */
export function stageArgs(
  mounts: readonly OsMount[],
  user: { uid: number; gid: number },
  setpriv: string,
  bwrap: string,
): { args: string[]; sources: string[] } {
  const args = ['--dev-bind', '/', '/', '--tmpfs', STAGE_DIR, '--die-with-parent'];
  const sources = mounts.map((mount, i) => {
    checkPath(mount.path);
    const staged = `${STAGE_DIR}/${i}`;
    args.push(mount.mode === 'rw' ? '--bind' : '--ro-bind', mount.path, staged);
    return staged;
  });
  args.push('--chdir', '/', '--', setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', bwrap);
  return { args, sources };
}

/** prlimit's arguments: the limits are set inside bubblewrap's user namespace (see `OsSandbox.command`). */
export function prlimitArgs(limits: OsLimits): string[] {
  return [
    PRLIMIT,
    `--as=${limits.addressSpaceMb * 1024 * 1024}`,
    `--nproc=${limits.processes}`,
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${Math.max(0, Math.floor(limits.fileSizeBytes))}`,
    `--nofile=${limits.openFiles}`,
    '--core=0',
  ];
}

export function checkPath(path: string): void {
  if (path.includes('\0') || !path.startsWith('/'))
    throw new AlfredError(ErrorCode.BadRequest, 'unusable sandbox path');
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
