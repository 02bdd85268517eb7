import {
  ErrorCode,
  manifestToJsonSchema,
  skillToolName,
  SkillManifest,
  type ExecutableSkillCreateBody,
  type ExecutableSkillDeleted,
  type ExecutableSkillDetail,
  type ExecutableSkillInfo,
  type ExecutableSkillPatch,
  type ExecutableSkillReloaded,
  type ExecutableSkillResolved,
  type ExecutableSkillSource,
  type Scope,
  type SkillChangeOrigin,
  type SkillFiles,
} from '#contracts';
import { AlfredError } from '#errors';
import { skillDigestOf, type SkillFileBytes } from '#sandbox';
import type { z } from 'zod';
import { checkSkillCode } from './skill-code.check.js';
import type { ExecutableSkillStore, SkillFolder } from './executable-skill.store.js';

/** One skill folder as the catalog knows it: loaded with its manifest, or invalid with the reason. */
interface CatalogEntry {
  readonly id: string;
  readonly source: ExecutableSkillSource;
  /** The tenant of a managed skill; undefined for bundled (shared, read-only) ones. */
  readonly owner?: string;
  readonly dir: string;
  readonly digest: string;
  readonly files: readonly SkillFileBytes[];
  readonly updatedAt: string;
  readonly manifest?: SkillManifest;
  readonly reason?: string;
}

const MANIFEST = 'skill.json';
const CODE = 'execute.ts';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bundled skills are keyed by id alone; a tenant's own by tenant and id. */
const keyOf = (owner: string | undefined, id: string) => `${owner ?? ''}\u0000${id}`;

/**
 * Executable skills: loading and validating folders, and changing managed ones at runtime. A change is
 * visible as soon as it is acknowledged; a broken folder is listed as invalid with the reason. A managed skill
 * belongs to one tenant and is invisible to every other; bundled skills are shared and read-only.
 */
export class ExecutableSkillCatalog {
  private entries = new Map<string, CatalogEntry>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: ExecutableSkillStore) {}

  /** Reads every folder again; reports what changed among the skills `tenant` sees (without `tenant`: all). */
  reload(tenant?: string): Promise<ExecutableSkillReloaded> {
    return this.serially(async () => {
      const before = this.entries;
      const next = new Map<string, CatalogEntry>();
      for (const folder of await this.store.scan()) next.set(keyOf(folder.owner, folder.id), toEntry(folder));
      this.entries = next;
      const seen = (e: CatalogEntry) => tenant === undefined || e.owner === undefined || e.owner === tenant;
      const now = [...next.entries()].filter(([, e]) => seen(e));
      const was = [...before.entries()].filter(([, e]) => seen(e));
      return {
        loaded: now.filter(([, e]) => e.manifest).length,
        invalid: now.filter(([, e]) => !e.manifest).length,
        added: now.filter(([k]) => !before.has(k)).map(([, e]) => e.id),
        removed: was.filter(([k]) => !next.has(k)).map(([, e]) => e.id),
        changed: now.filter(([k, e]) => before.has(k) && before.get(k)!.digest !== e.digest).map(([, e]) => e.id),
      };
    });
  }

  list(tenant: string): ExecutableSkillInfo[] {
    return [...this.entries.values()].filter((e) => e.owner === undefined || e.owner === tenant).sort((a, b) => a.id.localeCompare(b.id)).map(info);
  }

  get(tenant: string, id: string): ExecutableSkillDetail {
    return detail(this.entry(tenant, id));
  }

  /** An agent's change (origin `agent`) happens only after the user consented; the tool asks before calling. */
  async create(scope: Scope, body: ExecutableSkillCreateBody, origin: SkillChangeOrigin = { by: 'user', consented: false }): Promise<ExecutableSkillDetail> {
    requireConsent(origin, String(body.id));
    const { code, ...fields } = body;
    const manifest = validManifest({ name: fields.id, version: '1.0.0', createdBy: scope.agent, ...fields });
    validCode(code);
    return this.serially(async () => {
      if (this.visible(scope.tenant, manifest.id)) throw conflict(manifest.id);
      if (!(await this.store.create(scope.tenant, manifest.id, filesOf(manifest, code)))) throw conflict(manifest.id);
      return this.refresh({ id: manifest.id, source: 'managed', owner: scope.tenant, dir: this.store.dirFor(scope.tenant, manifest.id) });
    });
  }

  async update(tenant: string, id: string, patch: ExecutableSkillPatch, origin: SkillChangeOrigin = { by: 'user', consented: false }): Promise<ExecutableSkillDetail> {
    requireConsent(origin, id);
    return this.serially(async () => {
      const entry = this.writable(tenant, id);
      const { code, ...fields } = patch;
      const base: Record<string, unknown> = entry.manifest ?? rawManifest(entry) ?? {};
      const version = fields.version ?? bumpPatch(typeof base.version === 'string' ? base.version : undefined);
      const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
      const manifest = validManifest({ ...base, ...defined, id, version });
      if (code !== undefined) validCode(code);
      await this.store.replace(entry.dir, filesOf(manifest, code));
      return this.refresh(entry);
    });
  }

  delete(tenant: string, id: string, confirm: boolean): Promise<ExecutableSkillDeleted> {
    return this.serially(async () => {
      const entry = this.writable(tenant, id);
      if (!confirm) {
        const preview = {
          confirm_required: true,
          id,
          ...(entry.manifest ? { version: entry.manifest.version } : {}),
          digest: entry.digest,
          files: entry.files.map((f) => f.path),
          confirm_with: `DELETE /executable-skills/${id}?confirm=true`,
        };
        throw new AlfredError(ErrorCode.Conflict, `deleting skill ${id} needs confirmation: repeat with confirm=true`, preview);
      }
      await this.store.remove(entry.dir);
      this.entries.delete(keyOf(entry.owner, id));
      return { id, deleted: true, digest: entry.digest };
    });
  }

  resolve(tenant: string, id: string): ExecutableSkillResolved {
    const e = this.entry(tenant, id);
    return { id: e.id, status: e.manifest ? 'loaded' : 'invalid', digest: e.digest, ...(e.reason ? { reason: e.reason } : {}), ...(e.manifest ? { version: e.manifest.version } : {}) };
  }

  /** The exact bytes behind a digest; a skill that changed since is a conflict (the runner resolves again). */
  files(tenant: string, id: string, digest: string): SkillFiles {
    const e = this.entry(tenant, id);
    if (!e.manifest) throw new AlfredError(ErrorCode.Conflict, `skill ${id} is invalid: ${e.reason}`, { id, reason: e.reason });
    if (e.digest !== digest) throw new AlfredError(ErrorCode.Conflict, `skill ${id} changed: its digest is now ${e.digest}`, { id, digest: e.digest });
    return { id, digest, files: e.files.map(encodeFile) };
  }

  /** The tenant's own skill of that id, else the bundled one; another tenant's skill is simply not there. */
  private visible(tenant: string, id: string): CatalogEntry | undefined {
    return this.entries.get(keyOf(tenant, id)) ?? this.entries.get(keyOf(undefined, id));
  }

  private entry(tenant: string, id: string): CatalogEntry {
    const entry = this.visible(tenant, id);
    if (!entry) throw AlfredError.notFound('executable skill', id);
    return entry;
  }

  private writable(tenant: string, id: string): CatalogEntry {
    const entry = this.entry(tenant, id);
    if (entry.source !== 'managed') throw new AlfredError(ErrorCode.Forbidden, `skill ${id} is bundled with Alfred and read-only`, { id });
    if (entry.owner !== tenant) throw new AlfredError(ErrorCode.Forbidden, `skill ${id} was placed on disk by the operator; it is shared and read-only`, { id });
    return entry;
  }

  private async refresh(folder: { id: string; source: ExecutableSkillSource; owner?: string; dir: string }): Promise<ExecutableSkillDetail> {
    const entry = toEntry(await this.store.reread(folder));
    this.entries.set(keyOf(entry.owner, entry.id), entry);
    return detail(entry);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

function toEntry(folder: SkillFolder): CatalogEntry {
  const files = folder.files ?? [];
  const base = { id: folder.id, source: folder.source, dir: folder.dir, ...(folder.owner === undefined ? {} : { owner: folder.owner }), files, digest: skillDigestOf(files), updatedAt: folder.modifiedAt.toISOString() };
  const invalid = (reason: string): CatalogEntry => ({ ...base, reason });
  if (folder.problem) return invalid(folder.problem);
  const manifestFile = files.find((f) => f.path === MANIFEST);
  const codeFile = files.find((f) => f.path === CODE);
  if (!manifestFile) return invalid(`${MANIFEST} is missing`);
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(manifestFile.bytes).toString('utf8'));
  } catch (err) {
    return invalid(`${MANIFEST} is not JSON: ${(err as Error).message}`);
  }
  const parsed = SkillManifest.safeParse(raw);
  if (!parsed.success) return invalid(`${MANIFEST}: ${summarize(parsed.error)}`);
  if (parsed.data.id !== folder.id) return invalid(`${MANIFEST}: id ${parsed.data.id} does not match the folder name ${folder.id}`);
  if (!codeFile) return invalid(`${CODE} is missing`);
  const problem = checkSkillCode(Buffer.from(codeFile.bytes).toString('utf8'));
  return problem ? invalid(problem) : { ...base, manifest: parsed.data };
}

function info(e: CatalogEntry): ExecutableSkillInfo {
  const common = { id: e.id, status: e.manifest ? ('loaded' as const) : ('invalid' as const), source: e.source, digest: e.digest, updated_at: e.updatedAt };
  if (!e.manifest) return { ...common, reason: e.reason ?? 'invalid' };
  const m = e.manifest;
  return {
    ...common,
    version: m.version,
    name: m.name,
    description: m.description,
    tags: m.tags,
    created_by: m.createdBy,
    tool_name: skillToolName(m.id),
    input_schema: manifestToJsonSchema(m),
  };
}

function detail(e: CatalogEntry): ExecutableSkillDetail {
  const code = e.files.find((f) => f.path === CODE);
  return { ...info(e), ...(e.manifest ? { manifest: e.manifest } : {}), ...(code ? { code: Buffer.from(code.bytes).toString('utf8') } : {}) };
}

function rawManifest(e: CatalogEntry): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(e.files.find((f) => f.path === MANIFEST)?.bytes ?? []).toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function validManifest(candidate: Record<string, unknown>): SkillManifest {
  const parsed = SkillManifest.safeParse(candidate);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message, code: i.code }));
  throw new AlfredError(ErrorCode.ValidationFailed, `invalid skill manifest: ${summarize(parsed.error)}`, { issues });
}

function validCode(code: string): void {
  const problem = checkSkillCode(code);
  if (problem) throw new AlfredError(ErrorCode.ValidationFailed, problem, { issues: [{ path: 'code', message: problem, code: 'custom' }] });
}

function filesOf(manifest: SkillManifest, code: string | undefined): Record<string, string> {
  return { [MANIFEST]: `${JSON.stringify(manifest, null, 2)}\n`, ...(code === undefined ? {} : { [CODE]: code }) };
}

/** 1.2.3 → 1.2.4 (pre-release and build dropped); anything unparseable starts again at 1.0.0. */
export function bumpPatch(version: string | undefined): string {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  return m ? `${m[1]}.${m[2]}.${Number(m[3]) + 1}` : '1.0.0';
}

function encodeFile(f: SkillFileBytes): { path: string; encoding: 'utf8' | 'base64'; content: string } {
  try {
    return { path: f.path, encoding: 'utf8', content: utf8.decode(f.bytes) };
  } catch {
    return { path: f.path, encoding: 'base64', content: Buffer.from(f.bytes).toString('base64') };
  }
}

function requireConsent(origin: SkillChangeOrigin, id: string): void {
  if (origin.by === 'agent' && !origin.consented) {
    throw new AlfredError(ErrorCode.Forbidden, `an agent may create or change skill ${id} only after the user consents`, { id });
  }
}

const conflict = (id: string) => new AlfredError(ErrorCode.Conflict, `an executable skill with id ${id} already exists`, { id });

function summarize(err: z.ZodError): string {
  return err.issues.map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message)).join('; ');
}
