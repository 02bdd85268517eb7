import { createHash } from 'node:crypto';
import {
  ErrorCode,
  type SkillManifest,
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
import {
  awaitsConsent,
  CODE,
  detail,
  encodeFile,
  info,
  MANIFEST,
  rawManifest,
  toEntry,
  validCode,
  validManifest,
  type CatalogEntry,
} from './executable-skill.entry.js';
import type { ExecutableSkillStore } from './executable-skill.store.js';

export { validCode, validManifest } from './executable-skill.entry.js';

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
    return [...this.entries.values()]
      .filter((e) => e.owner === undefined || e.owner === tenant)
      .sort((a, b) => a.id.localeCompare(b.id))
      .map(info);
  }

  get(tenant: string, id: string): ExecutableSkillDetail {
    return detail(this.entry(tenant, id));
  }

  /** An agent's change (origin `agent`) happens only after the user consented; the tool asks before calling. */
  async create(
    scope: Scope,
    body: ExecutableSkillCreateBody,
    origin: SkillChangeOrigin = { by: 'user', consented: false },
  ): Promise<ExecutableSkillDetail> {
    requireConsent(origin, String(body.id));
    const { code, ...fields } = body;
    const manifest = validManifest({ name: fields.id, version: '1.0.0', createdBy: scope.agent, ...fields });
    validCode(code);
    return this.serially(async () => {
      if (this.visible(scope.tenant, manifest.id)) throw conflict(manifest.id);
      if (!(await this.store.create(scope.tenant, manifest.id, filesOf(manifest, code)))) throw conflict(manifest.id);
      return this.refresh({
        id: manifest.id,
        source: 'managed',
        owner: scope.tenant,
        dir: this.store.dirFor(scope.tenant, manifest.id),
      });
    });
  }

  async update(
    tenant: string,
    id: string,
    patch: ExecutableSkillPatch,
    origin: SkillChangeOrigin = { by: 'user', consented: false },
  ): Promise<ExecutableSkillDetail> {
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
      const changed = await this.refresh(entry);
      // A change the user made (or consented to through an agent's tool) is consented to as it is.
      if (!entry.installed) return changed;
      await this.store.writeInstalled(tenant, id, { consentedDigest: changed.digest });
      return this.refresh(entry);
    });
  }

  /** The tenant's own skill's files (path → SHA-256), empty when it has none of that id. */
  fileHashes(tenant: string, id: string): Map<string, string> {
    const files = this.entries.get(keyOf(tenant, id))?.files ?? [];
    return new Map(files.map((f) => [f.path, createHash('sha256').update(f.bytes).digest('hex')]));
  }

  /** Whose skill of that id the tenant sees: its own, a shared one (bundled or placed by the operator), or none. */
  holder(tenant: string, id: string): 'own' | 'shared' | undefined {
    const entry = this.visible(tenant, id);
    return entry === undefined ? undefined : entry.owner === tenant ? 'own' : 'shared';
  }

  /**
   * Writes (or replaces) the tenant's own skill from a repository's folder, checked as a created one is. It runs only
   * once the tenant consents to this version: a replacement keeps the consent only when nothing changed. Resolves to
   * the skill and an undo that puts the previous folder back.
   */
  install(
    tenant: string,
    id: string,
    files: ReadonlyMap<string, Buffer>,
  ): Promise<{ skill: ExecutableSkillDetail; undo: () => Promise<void> }> {
    return this.serially(async () => {
      const before = this.entries.get(keyOf(tenant, id));
      const placed = await this.store.put(tenant, id, files);
      const folder = { id, source: 'managed' as const, owner: tenant, dir: this.store.dirFor(tenant, id) };
      const undo = async () => {
        await placed.undo();
        await this.store.writeInstalled(tenant, id, before?.installed);
        if (before) await this.refresh(before);
        else this.entries.delete(keyOf(tenant, id));
      };
      try {
        const previous = before?.installed?.consentedDigest;
        await this.store.writeInstalled(tenant, id, previous ? { consentedDigest: previous } : {});
        const skill = await this.refresh(folder);
        if (skill.status === 'invalid')
          throw new AlfredError(ErrorCode.ValidationFailed, `executable skill ${id} is invalid: ${skill.reason}`, {
            id,
            reason: skill.reason,
          });
        await placed.done();
        return { skill, undo: () => this.serially(undo) };
      } catch (err) {
        await undo();
        throw err;
      }
    });
  }

  /**
   * The tenant lets this version of a skill installed from git run; a digest other than the current one is a conflict.
   */
  consent(tenant: string, id: string, digest: string): Promise<ExecutableSkillDetail> {
    return this.serially(async () => {
      const entry = this.writable(tenant, id);
      if (!entry.installed) return detail(entry);
      if (entry.digest !== digest) {
        const message =
          `skill ${id} changed since that version was shown: its digest is now ` +
          `${entry.digest}; review it and consent to that one`;
        throw new AlfredError(ErrorCode.Conflict, message, { id, digest: entry.digest });
      }
      if (!entry.manifest)
        throw new AlfredError(ErrorCode.Conflict, `skill ${id} is invalid and cannot run: ${entry.reason}`, {
          id,
          reason: entry.reason,
        });
      await this.store.writeInstalled(tenant, id, { consentedDigest: digest });
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
        throw new AlfredError(
          ErrorCode.Conflict,
          `deleting skill ${id} needs confirmation: repeat with confirm=true`,
          preview,
        );
      }
      await this.store.remove(entry.dir);
      if (entry.installed) await this.store.writeInstalled(tenant, id, undefined);
      this.entries.delete(keyOf(entry.owner, id));
      return { id, deleted: true, digest: entry.digest };
    });
  }

  resolve(tenant: string, id: string): ExecutableSkillResolved {
    const e = this.runnable(tenant, id);
    return {
      id: e.id,
      status: e.manifest ? 'loaded' : 'invalid',
      digest: e.digest,
      ...(e.reason ? { reason: e.reason } : {}),
      ...(e.manifest ? { version: e.manifest.version } : {}),
    };
  }

  /** The exact bytes behind a digest; a skill that changed since is a conflict (the runner resolves again). */
  files(tenant: string, id: string, digest: string): SkillFiles {
    const e = this.runnable(tenant, id);
    if (!e.manifest)
      throw new AlfredError(ErrorCode.Conflict, `skill ${id} is invalid: ${e.reason}`, { id, reason: e.reason });
    if (e.digest !== digest)
      throw new AlfredError(ErrorCode.Conflict, `skill ${id} changed: its digest is now ${e.digest}`, {
        id,
        digest: e.digest,
      });
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

  /**
   * A skill installed from git runs only in a version the tenant consented to; the runner gets this refusal as it is.
   */
  private runnable(tenant: string, id: string): CatalogEntry {
    const entry = this.entry(tenant, id);
    if (awaitsConsent(entry)) {
      const message =
        `skill ${id} was installed from git and runs only after the tenant consents to this ` +
        `version: POST /executable-skills/${id}/consent with {"digest": "${entry.digest}"}`;
      throw new AlfredError(ErrorCode.Forbidden, message, { id, digest: entry.digest, reason: 'awaiting_consent' });
    }
    return entry;
  }

  private writable(tenant: string, id: string): CatalogEntry {
    const entry = this.entry(tenant, id);
    if (entry.source !== 'managed')
      throw new AlfredError(ErrorCode.Forbidden, `skill ${id} is bundled with Alfred and read-only`, { id });
    if (entry.owner !== tenant)
      throw new AlfredError(
        ErrorCode.Forbidden,
        `skill ${id} was placed on disk by the operator; it is shared and read-only`,
        { id },
      );
    return entry;
  }

  private async refresh(folder: {
    id: string;
    source: ExecutableSkillSource;
    owner?: string;
    dir: string;
  }): Promise<ExecutableSkillDetail> {
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

function filesOf(manifest: SkillManifest, code: string | undefined): Record<string, string> {
  return { [MANIFEST]: `${JSON.stringify(manifest, null, 2)}\n`, ...(code === undefined ? {} : { [CODE]: code }) };
}

/** 1.2.3 → 1.2.4 (pre-release and build dropped); anything unparseable starts again at 1.0.0. */
export function bumpPatch(version: string | undefined): string {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  return m ? `${m[1]}.${m[2]}.${Number(m[3]) + 1}` : '1.0.0';
}

function requireConsent(origin: SkillChangeOrigin, id: string): void {
  if (origin.by === 'agent' && !origin.consented) {
    throw new AlfredError(
      ErrorCode.Forbidden,
      `an agent may create or change skill ${id} only after the user consents`,
      { id },
    );
  }
}

const conflict = (id: string) =>
  new AlfredError(ErrorCode.Conflict, `an executable skill with id ${id} already exists`, { id });
