import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { SandboxPaths, type OsMount, type OsSandbox } from './os/os-sandbox.js';

/**
 * Where a skill process runs: in the OS sandbox for a tenant, or (operator opt-out) under Node's permission model only.
 */
export interface OsPlacement {
  readonly sandbox: OsSandbox;
  readonly tenant: string;
}

/** What the command for one skill process is built from; all paths are real (symlink-free) absolute host paths. */
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

/**
 * The paths the skill process itself uses. Inside the OS sandbox they are fixed (`/skill`, `/data/self`,
 * `/alfred/node/node` …), so nothing the skill sees or prints names a host path; without it, the host's own.
 */
export interface SkillView {
  readonly nodePath: string;
  readonly bootstrapPath: string;
  readonly skillDir: string;
  readonly roots: Record<string, string>;
  /** Host folder → what shows it inside; empty without the OS sandbox. */
  readonly mounts: OsMount[];
}

/** Node reserves about this much address space before running anything (V8's cages and code range). */
const NODE_BASE_ADDRESS_SPACE_MB = 1280;
/** CPU seconds a kept-alive process may use in all; it is retired before a run could find less than its timeout. */
export const WARM_CPU_RUNS = 4;

/** How the skill's process sees its files: host paths, or the sandbox's fixed ones with the mounts that show them. */
export function skillView(spec: SkillProcessSpec): SkillView {
  if (!spec.os)
    return {
      nodePath: spec.nodePath,
      bootstrapPath: spec.bootstrapPath,
      skillDir: spec.skillDir,
      roots: spec.roots,
      mounts: [],
    };
  const realNode = realpathSync(spec.nodePath);
  const writable = new Set(spec.writable);
  const roots: Record<string, string> = {};
  const mounts: OsMount[] = [
    { path: path.dirname(realNode), mode: 'ro', target: SandboxPaths.node },
    { path: path.dirname(spec.bootstrapPath), mode: 'ro', target: SandboxPaths.code },
    { path: spec.skillDir, mode: 'ro', target: SandboxPaths.skill },
  ];
  for (const [name, dir] of Object.entries(spec.roots)) {
    if (name === 'skill') {
      roots[name] = SandboxPaths.skill;
      continue;
    }
    roots[name] = `${SandboxPaths.data}/${name}`;
    mounts.push({ path: dir, mode: writable.has(name) ? 'rw' : 'ro', target: roots[name] });
  }
  return {
    nodePath: `${SandboxPaths.node}/${path.basename(realNode)}`,
    bootstrapPath: `${SandboxPaths.code}/${path.basename(spec.bootstrapPath)}`,
    skillDir: SandboxPaths.skill,
    roots,
    mounts,
  };
}

/** Node flags for a run: the permission model with reads/writes only where allowed, heap caps, no inspector signal. */
export function sandboxArgv(
  spec: Pick<SkillProcessSpec, 'bootstrapPath' | 'skillDir' | 'roots' | 'readable' | 'writable' | 'memoryMb'>,
): string[] {
  const dirOf = (name: string) => spec.roots[name] ?? missingRoot(name);
  const reads = new Set([
    path.dirname(spec.bootstrapPath),
    spec.skillDir,
    ...spec.readable.map(dirOf),
    ...spec.writable.map(dirOf),
  ]);
  const writes = new Set(spec.writable.map(dirOf));
  for (const dir of [...reads, spec.bootstrapPath]) {
    // Node has accepted comma-separated lists in these flags; a comma would widen the grant.
    if (dir.includes(',') || !path.isAbsolute(dir))
      throw new AlfredError(ErrorCode.BadRequest, `unusable sandbox path: ${dir}`);
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
export function skillProcessCommand(spec: SkillProcessSpec, keepAlive: boolean): { file: string; args: string[] } {
  const view = skillView(spec);
  const node = [view.nodePath, ...sandboxArgv({ ...spec, ...view })];
  if (!spec.os) return { file: node[0]!, args: node.slice(1) };
  return spec.os.sandbox.command({
    command: node,
    mounts: view.mounts,
    cwd: view.skillDir,
    tenant: spec.os.tenant,
    kind: 'skill',
    tmpfsMb: 8,
    limits: {
      addressSpaceMb: NODE_BASE_ADDRESS_SPACE_MB + spec.memoryMb + spec.rssHeadroomMb,
      // Node itself runs about ten threads; a skill cannot start processes (the inner layer refuses child_process).
      processes: 512,
      cpuSeconds: cpuBudgetSeconds(spec.timeoutMs, keepAlive),
      fileSizeBytes: Math.max(1024 * 1024, spec.fileBytes),
      openFiles: 256,
    },
  });
}

function missingRoot(name: string): never {
  throw new AlfredError(ErrorCode.Internal, `sandbox root ${name} was not prepared`);
}
