import { createHash, randomUUID } from 'node:crypto';
import { chmod, chown, mkdir, realpath, stat } from 'node:fs/promises';
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
import { Metrics } from '#metrics';
import { FetchGuard } from './fetch-guard.js';
import { DiskQuota, quotaMessage, type QuotaNames, type QuotaState } from './quota/disk-quota.js';
import { OsSandbox, osSandboxUnavailable, sandboxUser } from './os/os-sandbox.js';
import { sandboxArgv, skillView, type OsPlacement } from './sandbox-command.js';
import { runSandboxed, runWarm, SandboxProcess, type SandboxOutcome, type SandboxSpec } from './sandbox-process.js';
import { DEFAULT_SANDBOX_LIMITS, type SandboxEnd, type SandboxLimits } from './sandbox-protocol.js';
import { skillDigest } from './skill-digest.js';
import { WarmPool } from './warm-pool.js';

export interface SkillRunnerOptions {
  /** Absolute directory holding `skill-data/<id>` (root `self`) and `shared/<name>` (roots `shared/<name>`). */
  dataRoot: string;
  /** Values skills may receive as environment variables, by name; a skill gets only those its manifest lists. */
  secrets?: Readonly<Record<string, string>>;
  /**
   * Which tenants' skills may receive each secret (`*` for every tenant). A secret granted to no tenant reaches no
   * skill, whatever its manifest names: the operator, not the skill's author, decides who gets a secret.
   */
  secretGrants?: Readonly<Record<string, readonly string[] | '*'>>;
  fetchGuard?: FetchGuard;
  limits?: Partial<SandboxLimits>;
  /** The Node 24 binary that runs skills; defaults to the one running the service. */
  nodePath?: string;
  /**
   * Idle processes kept alive per skill version (same id, digest and sandbox) for its next runs; 0 (the
   * default) runs every execution in a fresh process. Different skills or versions never share a process.
   */
  warmPoolSize?: number;
  /**
   * `required` (the default): every skill process runs inside bubblewrap, and executions are refused when it cannot
   * start. `unsafe-off`: Node's permission model only — an operator's explicit, logged choice.
   */
  osSandbox?: 'required' | 'unsafe-off';
  bwrapPath?: string;
  /** Disk one tenant's skill data (every `self` and `shared/<name>` root) may hold; unlimited when absent. */
  tenantDataQuotaBytes?: number;
}

/** One execution: what the caller gets back and what the audit trail records. */
export interface SkillExecution {
  result: SkillResult;
  record: SkillExecutionRecord;
}

const SKILL_DATA_QUOTA: QuotaNames = { folder: "this tenant's skill data", tenant: "this tenant's skill data" };

const BOOTSTRAP = fileURLToPath(
  new URL(`./child/bootstrap${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/** A tenant's folder name under the data root (any tenant id, no path tricks). */
export function tenantSegment(tenant: string): string {
  return encodeURIComponent(tenant).replace(/\./g, '%2E');
}

/** Runs executable skills, each execution in its own permission-restricted Node process inside the OS sandbox. */
export class SkillRunner {
  private readonly limits: SandboxLimits;
  private readonly guard: FetchGuard;
  private readonly secrets: Readonly<Record<string, string>>;
  private readonly nodePath: string;
  private readonly pool: WarmPool;
  private readonly quota?: DiskQuota;
  private readonly untrack?: () => void;
  /** One reservation at a time per tenant, so two runs cannot both take the same last bytes. */
  private readonly reserving = new Map<string, Promise<unknown>>();

  constructor(private readonly options: SkillRunnerOptions) {
    if (!path.isAbsolute(options.dataRoot))
      throw new AlfredError(ErrorCode.BadRequest, 'dataRoot must be an absolute path');
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
    this.guard = options.fetchGuard ?? new FetchGuard();
    this.secrets = options.secrets ?? {};
    this.nodePath = options.nodePath ?? process.execPath;
    this.pool = new WarmPool({ perKey: options.warmPoolSize ?? 0 });
    const quota = options.tenantDataQuotaBytes;
    if (quota !== undefined) this.quota = new DiskQuota({ folderBytes: quota, tenantBytes: quota });
    if (this.quota) this.untrack = Metrics.diskUsage.track({ area: 'skill_data' }, () => this.quota!.knownTotal());
    this.os = options.osSandbox === 'unsafe-off' ? undefined : new OsSandbox(options.bwrapPath);
  }

  private readonly os: OsSandbox | undefined;

  /** Whether runs get the OS layer, and when it is required but cannot start, why. */
  static async osStatus(
    options: Pick<SkillRunnerOptions, 'osSandbox' | 'bwrapPath'>,
  ): Promise<{ mode: 'required' | 'unsafe-off'; available: boolean; reason?: string }> {
    if (options.osSandbox === 'unsafe-off')
      return {
        mode: 'unsafe-off',
        available: false,
        reason: 'turned off by the operator (ALFRED_OS_SANDBOX=unsafe-off)',
      };
    return { mode: 'required', ...(await OsSandbox.probe(options.bwrapPath)) };
  }

  /** Kills the idle warm processes; runs in flight finish on their own. */
  close(): void {
    this.untrack?.();
    this.pool.close();
  }

  /** Idle warm processes (pid and key), for tests and diagnostics. */
  warmProcesses(): Array<{ key: string; pid: number | undefined }> {
    return this.pool.idlePids();
  }

  /** Validates the arguments (throws VALIDATION_FAILED, nothing runs), runs the skill and validates its result. */
  async execute(
    skillDir: string,
    manifest: SkillManifest,
    args: unknown,
    caller: SkillCaller,
  ): Promise<SkillExecution> {
    const startedAt = new Date();
    const parsedCaller = SkillCaller.parse(caller);
    const parsedArgs = this.parseArgs(manifest, args);
    const realDir = await realpath(skillDir);
    const entry = path.join(realDir, 'execute.ts');
    if (!(await stat(entry).catch(() => undefined))?.isFile()) {
      throw new AlfredError(ErrorCode.NotFound, `skill ${manifest.id} has no execute.ts`, { skillDir });
    }
    const os = await this.placement(parsedCaller.tenant);
    const [digest, roots] = await Promise.all([
      skillDigest(realDir),
      this.prepareRoots(manifest, realDir, parsedCaller.tenant),
    ]);
    const outcome = await this.run(parsedCaller.tenant, manifest.id, digest, {
      nodePath: this.nodePath,
      bootstrapPath: BOOTSTRAP,
      skillDir: realDir,
      entry,
      args: parsedArgs,
      env: this.allowedEnv(manifest, parsedCaller.tenant),
      roots,
      readable: ['skill', ...manifest.permissions.fs.read, ...manifest.permissions.fs.write],
      writable: manifest.permissions.fs.write,
      allowedHosts: manifest.permissions.net,
      timeoutMs: manifest.timeoutMs,
      memoryMb: manifest.memoryMb,
      limits: this.limits,
      guard: this.guard,
      fileBytes: this.limits.fileBytes,
      rssHeadroomMb: this.limits.rssHeadroomMb,
      ...(os ? { os } : {}),
      ...(this.quota ? { reserve: (bytes: number) => this.reserve(parsedCaller.tenant, bytes) } : {}),
    });
    // Inside the OS sandbox every path is a fixed one (`/skill`, `/data/self`); without it, host paths become root
    // names.
    const { result, outcome: kind } = interpret(
      outcome.end,
      manifest,
      os ? {} : { [realDir]: 'skill', ...invert(roots) },
    );
    return { result, record: this.record(manifest, digest, parsedCaller, startedAt, kind, result, outcome) };
  }

  private async placement(tenant: string): Promise<OsPlacement | undefined> {
    if (!this.os) return undefined;
    const status = await OsSandbox.probe(this.options.bwrapPath, this.options.dataRoot);
    if (!status.available) throw osSandboxUnavailable('executing skills', status.reason);
    return { sandbox: this.os, tenant };
  }

  /**
   * Warm processes are keyed by tenant and exact skill version (and sandbox), so no run sees another tenant's globals.
   */
  private async run(tenant: string, id: string, digest: string, spec: SandboxSpec): Promise<SandboxOutcome> {
    if (!this.pool.enabled) return runSandboxed(spec);
    const view = skillView(spec);
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          tenant,
          id,
          digest,
          spec.nodePath,
          sandboxArgv({ ...spec, ...view }),
          view.mounts,
          spec.env,
          spec.skillDir,
          spec.os ? 'os' : 'no-os',
        ]),
      )
      .digest('hex');
    const proc = this.pool.take(key) ?? new SandboxProcess(spec, true);
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
    throw new AlfredError(ErrorCode.ValidationFailed, `invalid arguments for skill ${manifest.id}: ${summary}`, {
      issues,
    });
  }

  private allowedEnv(manifest: SkillManifest, tenant: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const name of manifest.permissions.env) {
      const value = this.secrets[name];
      const grant = this.options.secretGrants?.[name];
      if (value !== undefined && (grant === '*' || grant?.includes(tenant))) env[name] = value;
    }
    return env;
  }

  /** The tenant's skill data (walked again every few seconds, counted in between) and its quota. */
  async dataUsage(tenant: string): Promise<QuotaState | undefined> {
    return this.quota?.state(this.tenantBase(tenant));
  }

  /** Takes room for a skill's write from its tenant's quota, or says why not (the skill's writeFile throws it). */
  private reserve(tenant: string, bytes: number): Promise<string | undefined> {
    const run = async () => {
      if (bytes < 0) return void this.quota!.noted(this.tenantBase(tenant), undefined, bytes);
      const state = await this.quota!.state(this.tenantBase(tenant));
      if (bytes > state.remaining) Metrics.diskQuotaRefusals.inc({ area: 'skill_data' });
      if (bytes > state.remaining)
        return `write refused: it adds ${bytes} bytes past the ${quotaMessage(state, SKILL_DATA_QUOTA)}`;
      this.quota!.noted(this.tenantBase(tenant), undefined, bytes);
      return undefined;
    };
    const next = (this.reserving.get(tenant) ?? Promise.resolve()).then(run, run);
    this.reserving.set(tenant, next);
    void next.finally(() => this.reserving.get(tenant) === next && this.reserving.delete(tenant));
    return next;
  }

  private tenantBase(tenant: string): string {
    return path.join(this.options.dataRoot, 'tenants', tenantSegment(tenant));
  }

  /**
   * Data roots live under the caller's tenant: `<dataRoot>/tenants/<tenant>/skill-data/<id>` and `.../shared/<name>`.
   */
  private async prepareRoots(
    manifest: SkillManifest,
    skillDir: string,
    tenant: string,
  ): Promise<Record<string, string>> {
    const roots: Record<string, string> = { skill: skillDir };
    const { read, write } = manifest.permissions.fs;
    const base = this.tenantBase(tenant);
    const owner = this.os ? sandboxUser(tenant, 'skill') : undefined;
    for (const name of new Set([...read, ...write])) {
      const dir = name === 'self' ? path.join(base, 'skill-data', manifest.id) : path.join(base, name);
      // Sandboxes see the folder only through their mount: no sandbox user ever passes through its parents.
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (owner) await chown(dir, owner.uid, owner.gid);
      await chmod(dir, 0o700);
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

/** Root folder to root name, so errors say `skill/…` or `self/…` instead of a server path. */
function invert(roots: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(roots).map(([name, dir]) => [dir, name]));
}

/** A V8 allocation refused by the address-space limit (RLIMIT_AS) surfaces as a throw; it is an out-of-memory end. */
const ALLOCATION_FAILED = /^(Failed to allocate memory|Array buffer allocation failed|Invalid array buffer length)/;

/**
 * Turns how the child ended into the skill result and the recorded outcome; server paths in errors become root names.
 */
function interpret(
  end: SandboxEnd,
  manifest: SkillManifest,
  paths: Record<string, string>,
): { result: SkillResult; outcome: SkillExecutionOutcome } {
  const scrub = (text: string) => Object.entries(paths).reduce((out, [dir, name]) => out.replaceAll(dir, name), text);
  const fail = (outcome: SkillExecutionOutcome, error: string) => ({
    result: { success: false, error: scrub(error) },
    outcome,
  });
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
      if (ALLOCATION_FAILED.test(end.message))
        return fail('out_of_memory', `exceeded memory limit of ${manifest.memoryMb} MB`);
      return fail('threw', end.message);
    case 'result':
      return checkResult(end.json, manifest);
  }
}

function checkResult(json: string, manifest: SkillManifest): { result: SkillResult; outcome: SkillExecutionOutcome } {
  const invalid = (why: string) => ({
    result: { success: false, error: `invalid result: ${why}` },
    outcome: 'invalid_result' as const,
  });
  const parsed = SkillResult.safeParse(JSON.parse(json));
  if (!parsed.success)
    return invalid(`expected {success: boolean, result?, error?: string}: ${summarize(parsed.error.issues)}`);
  const result = parsed.data;
  if (result.success && manifest.result) {
    const checked = parameterSchema(manifest.result).safeParse(result.result);
    if (!checked.success)
      return invalid(`result does not match the manifest's result schema: ${summarize(checked.error.issues)}`);
  }
  return { result, outcome: result.success ? 'succeeded' : 'failed' };
}

function summarize(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues.map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message)).join('; ');
}
