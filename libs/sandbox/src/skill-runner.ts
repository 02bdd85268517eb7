import { createHash, randomUUID } from 'node:crypto';
import { mkdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildArgsSchema,
  ErrorCode,
  parameterSchema,
  SkillCaller,
  SkillResult,
  type SkillExecutionOutcome,
  type SkillExecutionRecord,
  type SkillManifest,
} from '#contracts';
import { AlfredError } from '#errors';
import { FetchGuard } from './fetch-guard.js';
import { runSandboxed, runWarm, sandboxArgv, SandboxProcess, type SandboxOutcome, type SandboxSpec } from './sandbox-process.js';
import { DEFAULT_SANDBOX_LIMITS, type SandboxEnd, type SandboxLimits } from './sandbox-protocol.js';
import { skillDigest } from './skill-digest.js';
import { WarmPool } from './warm-pool.js';

export interface SkillRunnerOptions {
  /** Absolute directory holding `skill-data/<id>` (root `self`) and `shared/<name>` (roots `shared/<name>`). */
  dataRoot: string;
  /** Values skills may receive as environment variables, by name; a skill gets only those its manifest lists. */
  secrets?: Readonly<Record<string, string>>;
  fetchGuard?: FetchGuard;
  limits?: Partial<SandboxLimits>;
  /** The Node 24 binary that runs skills; defaults to the one running the service. */
  nodePath?: string;
  /**
   * Idle processes kept alive per skill version (same id, digest and sandbox) for its next runs; 0 (the
   * default) runs every execution in a fresh process. Different skills or versions never share a process.
   */
  warmPoolSize?: number;
}

/** One execution: what the caller gets back and what the audit trail records. */
export interface SkillExecution {
  result: SkillResult;
  record: SkillExecutionRecord;
}

const BOOTSTRAP = fileURLToPath(new URL(`./child/bootstrap${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/** Runs executable skills, each execution in its own permission-restricted Node process. */
export class SkillRunner {
  private readonly limits: SandboxLimits;
  private readonly guard: FetchGuard;
  private readonly secrets: Readonly<Record<string, string>>;
  private readonly nodePath: string;
  private readonly pool: WarmPool;

  constructor(private readonly options: SkillRunnerOptions) {
    if (!path.isAbsolute(options.dataRoot)) throw new AlfredError(ErrorCode.BadRequest, 'dataRoot must be an absolute path');
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
    this.guard = options.fetchGuard ?? new FetchGuard();
    this.secrets = options.secrets ?? {};
    this.nodePath = options.nodePath ?? process.execPath;
    this.pool = new WarmPool({ perKey: options.warmPoolSize ?? 0 });
  }

  /** Kills the idle warm processes; runs in flight finish on their own. */
  close(): void {
    this.pool.close();
  }

  /** Idle warm processes (pid and key), for tests and diagnostics. */
  warmProcesses(): Array<{ key: string; pid: number | undefined }> {
    return this.pool.idlePids();
  }

  /** Validates the arguments (throws VALIDATION_FAILED, nothing runs), runs the skill and validates its result. */
  async execute(skillDir: string, manifest: SkillManifest, args: unknown, caller: SkillCaller): Promise<SkillExecution> {
    const startedAt = new Date();
    const parsedCaller = SkillCaller.parse(caller);
    const parsedArgs = this.parseArgs(manifest, args);
    const realDir = await realpath(skillDir);
    const entry = path.join(realDir, 'execute.ts');
    if (!(await stat(entry).catch(() => undefined))?.isFile()) {
      throw new AlfredError(ErrorCode.NotFound, `skill ${manifest.id} has no execute.ts`, { skillDir });
    }
    const [digest, roots] = await Promise.all([skillDigest(realDir), this.prepareRoots(manifest, realDir)]);
    const outcome = await this.run(manifest.id, digest, {
      nodePath: this.nodePath,
      bootstrapPath: BOOTSTRAP,
      skillDir: realDir,
      entry,
      args: parsedArgs,
      env: this.allowedEnv(manifest),
      roots,
      readable: ['skill', ...manifest.permissions.fs.read, ...manifest.permissions.fs.write],
      writable: manifest.permissions.fs.write,
      allowedHosts: manifest.permissions.net,
      timeoutMs: manifest.timeoutMs,
      memoryMb: manifest.memoryMb,
      limits: this.limits,
      guard: this.guard,
    });
    const { result, outcome: kind } = interpret(outcome.end, manifest);
    return { result, record: this.record(manifest, digest, parsedCaller, startedAt, kind, result, outcome) };
  }

  private async run(id: string, digest: string, spec: SandboxSpec): Promise<SandboxOutcome> {
    if (!this.pool.enabled) return runSandboxed(spec);
    const key = createHash('sha256').update(JSON.stringify([id, digest, spec.nodePath, sandboxArgv(spec), spec.env, spec.skillDir])).digest('hex');
    const proc = this.pool.take(key) ?? new SandboxProcess(spec);
    const outcome = await runWarm(spec, proc);
    if (outcome.reusable) this.pool.give(key, proc);
    else proc.kill();
    return outcome;
  }

  private parseArgs(manifest: SkillManifest, args: unknown): Record<string, unknown> {
    const parsed = buildArgsSchema(manifest).safeParse(args ?? {});
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
    const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
    throw new AlfredError(ErrorCode.ValidationFailed, `invalid arguments for skill ${manifest.id}: ${summary}`, { issues });
  }

  private allowedEnv(manifest: SkillManifest): Record<string, string> {
    const env: Record<string, string> = {};
    for (const name of manifest.permissions.env) {
      const value = this.secrets[name];
      if (value !== undefined) env[name] = value;
    }
    return env;
  }

  private async prepareRoots(manifest: SkillManifest, skillDir: string): Promise<Record<string, string>> {
    const roots: Record<string, string> = { skill: skillDir };
    const { read, write } = manifest.permissions.fs;
    for (const name of new Set([...read, ...write])) {
      const dir = name === 'self' ? path.join(this.options.dataRoot, 'skill-data', manifest.id) : path.join(this.options.dataRoot, name);
      await mkdir(dir, { recursive: true });
      roots[name] = await realpath(dir);
    }
    return roots;
  }

  private record(
    manifest: SkillManifest,
    digest: string,
    caller: SkillCaller,
    startedAt: Date,
    outcome: SkillExecutionOutcome,
    result: SkillResult,
    run: SandboxOutcome,
  ): SkillExecutionRecord {
    return {
      executionId: randomUUID(),
      skillId: manifest.id,
      version: manifest.version,
      digest,
      caller,
      startedAt: startedAt.toISOString(),
      durationMs: Date.now() - startedAt.getTime(),
      outcome,
      ...(result.success ? {} : { error: result.error }),
      ...run.output,
    };
  }
}

/** Turns how the child ended into the skill result and the recorded outcome. */
function interpret(end: SandboxEnd, manifest: SkillManifest): { result: SkillResult; outcome: SkillExecutionOutcome } {
  const fail = (outcome: SkillExecutionOutcome, error: string) => ({ result: { success: false, error }, outcome });
  switch (end.kind) {
    case 'timed_out':
      return fail('timed_out', `timed out after ${manifest.timeoutMs} ms`);
    case 'out_of_memory':
      return fail('out_of_memory', `exceeded memory limit of ${manifest.memoryMb} MB`);
    case 'output_limit':
      return fail('output_limit', 'output exceeded the limit; the skill was stopped');
    case 'crashed':
      return fail('crashed', end.reason);
    case 'threw':
      return fail('threw', end.message);
    case 'result':
      return checkResult(end.json, manifest);
  }
}

function checkResult(json: string, manifest: SkillManifest): { result: SkillResult; outcome: SkillExecutionOutcome } {
  const invalid = (why: string) => ({ result: { success: false, error: `invalid result: ${why}` }, outcome: 'invalid_result' as const });
  const parsed = SkillResult.safeParse(JSON.parse(json));
  if (!parsed.success) return invalid(`expected {success: boolean, result?, error?: string}: ${summarize(parsed.error.issues)}`);
  const result = parsed.data;
  if (result.success && manifest.result) {
    const checked = parameterSchema(manifest.result).safeParse(result.result);
    if (!checked.success) return invalid(`result does not match the manifest's result schema: ${summarize(checked.error.issues)}`);
  }
  return { result, outcome: result.success ? 'succeeded' : 'failed' };
}

function summarize(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues.map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message)).join('; ');
}
