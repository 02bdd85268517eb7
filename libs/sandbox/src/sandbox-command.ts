import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { OsMount, OsSandbox } from './os/os-sandbox.js';

/** Where a skill process runs: inside the OS sandbox for a tenant, or (operator opt-out) only under Node's permission model. */
export interface OsPlacement {
  readonly sandbox: OsSandbox;
  readonly tenant: string;
}

/** What the command for one skill process is built from; all paths are real (symlink-free) absolute paths. */
export interface SkillProcessSpec {
  nodePath: string;
  bootstrapPath: string;
  skillDir: string;
  roots: Record<string, string>;
  readable: string[];
  writable: string[];
  memoryMb: number;
  timeoutMs: number;
  fileBytes: number;
  rssHeadroomMb: number;
  os?: OsPlacement;
}

/** Node reserves about this much address space before running anything (V8's cages and code range). */
const NODE_BASE_ADDRESS_SPACE_MB = 1280;
/** CPU seconds a kept-alive process may use in all; it is retired before a run could find less than its timeout. */
export const WARM_CPU_RUNS = 4;

/** Node flags for a run: the permission model with reads/writes only where allowed, heap caps, no inspector signal. */
export function sandboxArgv(spec: Pick<SkillProcessSpec, 'bootstrapPath' | 'skillDir' | 'roots' | 'readable' | 'writable' | 'memoryMb'>): string[] {
  const dirOf = (name: string) => spec.roots[name] ?? missingRoot(name);
  const reads = new Set([path.dirname(spec.bootstrapPath), spec.skillDir, ...spec.readable.map(dirOf), ...spec.writable.map(dirOf)]);
  const writes = new Set(spec.writable.map(dirOf));
  for (const dir of [...reads, spec.bootstrapPath]) {
    // Node has accepted comma-separated lists in these flags; a comma would widen the grant.
    if (dir.includes(',') || !path.isAbsolute(dir)) throw new AlfredError(ErrorCode.BadRequest, `unusable sandbox path: ${dir}`);
  }
  return [
    '--permission',
    ...[...reads].map((dir) => `--allow-fs-read=${dir}`),
    ...[...writes].map((dir) => `--allow-fs-write=${dir}`),
    `--max-old-space-size=${spec.memoryMb}`,
    `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(spec.memoryMb / 16)))}`,
    '--disable-sigusr1',
    '--disable-warning=ExperimentalWarning',
    spec.bootstrapPath,
  ];
}

/** CPU seconds one skill process may use (RLIMIT_CPU); a kept-alive process gets room for several runs. */
export function cpuBudgetSeconds(timeoutMs: number, keepAlive: boolean): number {
  const perRun = Math.ceil(timeoutMs / 1000) + 1;
  return keepAlive ? perRun * WARM_CPU_RUNS : perRun;
}

/** The program and arguments that start one skill process, wrapped in the OS sandbox when there is one. */
export function skillProcessCommand(spec: SkillProcessSpec, keepAlive: boolean): { file: string; args: string[]; uid?: number; gid?: number } {
  const node = [spec.nodePath, ...sandboxArgv(spec)];
  if (!spec.os) return { file: node[0]!, args: node.slice(1) };
  const ro = (dir: string): OsMount => ({ path: dir, mode: 'ro' });
  const writable = new Set(spec.writable.map((name) => spec.roots[name]!));
  const readable = [...new Set(spec.readable.map((name) => spec.roots[name]!))].filter((dir) => !writable.has(dir));
  const mounts: OsMount[] = [
    ro(path.dirname(realpathSync(spec.nodePath))),
    ro(path.dirname(spec.bootstrapPath)),
    ro(spec.skillDir),
    ...readable.map(ro),
    ...[...writable].map((dir): OsMount => ({ path: dir, mode: 'rw' })),
  ];
  return spec.os.sandbox.command({
    command: node,
    mounts,
    cwd: spec.skillDir,
    tenant: spec.os.tenant,
    kind: 'skill',
    tmpfsMb: 8,
    limits: {
      addressSpaceMb: NODE_BASE_ADDRESS_SPACE_MB + spec.memoryMb + spec.rssHeadroomMb,
      // Node itself runs about ten threads; a skill cannot start processes (the inner layer refuses child_process).
      processes: 512,
      cpuSeconds: cpuBudgetSeconds(spec.timeoutMs, keepAlive),
      fileSizeMb: Math.max(1, Math.ceil(spec.fileBytes / (1024 * 1024))),
      openFiles: 256,
    },
  });
}

function missingRoot(name: string): never {
  throw new AlfredError(ErrorCode.Internal, `sandbox root ${name} was not prepared`);
}
