import {
  ErrorCode,
  type InstalledFrom,
  type InstalledKind,
  type RefusedSkill,
  type ScopedWriter,
  type SkillDeleted,
  type SkillInstallBody,
  type SkillInstallResult,
  type SkillUpdateResult,
} from '#contracts';
import { AlfredError } from '#errors';
import { assertBeforeDeadline } from '#bus';
import type { ExecutableSkillCatalog } from '../executable/executable-skill.catalog.js';
import type { SkillProvenanceRepository } from '../records/skill-provenance.repository.js';
import type { TenantSkills } from '../tenant-skills.js';
import type { GitHostGuard } from './git-host.guard.js';
import { parseSource, sourceKey, type GitRemote, type SourcePolicy } from './git-source.js';
import type { FetchedRepository, GitClient } from './git.client.js';
import { checkSkillFolder, type CheckedSkill, type InstallLimits } from './install-check.js';
import { InstallPlacer, type Placed } from './install-placer.js';
import type { InstallRecordsRepository } from './install-records.repository.js';
import { discoverInTree, type TreeSkillFolder } from './repo-tree.js';
import { fitInstallReply } from './reply-size.js';
import { SourceUpdater } from './source-updater.js';

export interface SkillInstallDeps {
  readonly tenants: TenantSkills;
  readonly executables: ExecutableSkillCatalog;
  readonly records: InstallRecordsRepository;
  readonly provenance?: SkillProvenanceRepository;
  readonly git: GitClient;
  readonly guard: GitHostGuard;
  readonly policy: SourcePolicy;
  readonly limits: InstallLimits;
  readonly now?: () => Date;
}

/** A fetched source and what checking its skill folders found. */
export interface CheckedSource {
  readonly ok: CheckedSkill[];
  readonly refused: RefusedSkill[];
}

/**
 * Skills installed from git into one tenant's catalog: fetch one commit of the source, find its skill folders by
 * discovery's rules, check each as a created skill is checked, refuse clashes unless asked to overwrite, and write
 * the rest pinned to the commit (`installed_from`). Changes of one tenant run one at a time.
 */
export class SkillInstallService {
  private readonly placer: InstallPlacer;
  private readonly updater: SourceUpdater;
  private readonly lanes = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: SkillInstallDeps) {
    const now = deps.now ?? (() => new Date());
    this.placer = new InstallPlacer({
      tenants: deps.tenants,
      executables: deps.executables,
      now,
      ...(deps.provenance ? { provenance: deps.provenance } : {}),
    });
    this.updater = new SourceUpdater({
      ...deps,
      placer: this.placer,
      fetch: (r, ref) => this.fetch(r, ref),
      check: (f, r, s) => this.check(f, r, s),
    });
  }

  async install(tenant: string, body: SkillInstallBody, writer?: ScopedWriter): Promise<SkillInstallResult> {
    const remote = parseSource(body.source, this.deps.policy);
    const repo = await this.fetch(remote, body.ref);
    try {
      if (body.expect_commit && body.expect_commit !== repo.commit) {
        throw new AlfredError(
          ErrorCode.Conflict,
          `${remote.source} at ${repo.ref} is now at ${repo.commit}, not ${body.expect_commit}; check it again`,
          { commit: repo.commit },
        );
      }
      const root = body.path ?? '';
      const found = discoverInTree(await repo.tree(), root, remote.name);
      const wanted = body.skills ? found.folders.filter((f) => body.skills!.includes(f.name)) : found.folders;
      const missing = (body.skills ?? [])
        .filter((n) => !found.folders.some((f) => f.name === n))
        .map((n) => notInSource(n, root));
      const checked = await this.check(wanted, repo, remote.source);
      const result = await this.serially(tenant, () =>
        this.placeAll(tenant, checked, { source: remote.source, repo, root }, body, writer),
      );
      const reply = {
        source: remote.source,
        ref: repo.ref,
        commit: repo.commit,
        path: root,
        dry_run: body.dry_run,
        ...result,
        warnings: found.warnings,
      };
      return fitInstallReply({ ...reply, refused: [...missing, ...reply.refused] });
    } finally {
      await repo.dispose();
    }
  }

  /** One installed skill, every skill of a source, or every installed source, moved to its ref's newest commit. */
  update(
    tenant: string,
    target: { name?: string; source?: string; overwrite: boolean },
    writer?: ScopedWriter,
  ): Promise<SkillUpdateResult> {
    return this.serially(tenant, () => this.updater.update(tenant, target, writer));
  }

  /** Removes the tenant's own skill (installed or created); without `confirm`, CONFLICT with what would go. */
  remove(tenant: string, name: string, confirm: boolean): Promise<SkillDeleted> {
    return this.serially(tenant, async () => {
      const record = await this.deps.records.get(tenant, name);
      const seen = await this.deps.tenants.visible(tenant, name);
      const executable = record?.kinds.includes('executable') && this.deps.executables.holder(tenant, name) === 'own';
      const kinds: InstalledKind[] = [
        ...(seen?.own ? (['skill'] as const) : []),
        ...(executable ? (['executable'] as const) : []),
      ];
      if (kinds.length === 0) {
        if (seen)
          throw new AlfredError(
            ErrorCode.Forbidden,
            `skill ${name} is shared (${seen.location}) and read-only here; remove it from its folder`,
            { name },
          );
        throw AlfredError.notFound('skill', name);
      }
      const installed = record ? { installed_from: record } : {};
      if (!confirm) {
        const location = seen?.own ? seen.location : `/executable-skills/${name}`;
        const preview = {
          confirm_required: true,
          name,
          location,
          kinds,
          ...installed,
          confirm_with: `DELETE /skills/${name}?confirm=true`,
        };
        throw new AlfredError(
          ErrorCode.Conflict,
          `deleting skill ${name} needs confirmation: repeat with confirm=true`,
          preview,
        );
      }
      if (kinds.includes('skill')) await this.deps.tenants.removeOwn(tenant, name);
      if (kinds.includes('executable')) await this.deps.executables.delete(tenant, name, true);
      if (record) await this.deps.records.change(tenant, new Map([[name, undefined]]));
      for (const kind of kinds)
        await this.deps.provenance?.forget(tenant, kind === 'skill' ? 'skill' : 'executable', name);
      await this.deps.tenants.refresh(tenant);
      return { name, deleted: true, kinds, ...installed };
    });
  }

  /** An executable skill deleted through /executable-skills: its record keeps only what is left. */
  async forgetExecutable(tenant: string, id: string): Promise<void> {
    const record = await this.deps.records.get(tenant, id);
    if (!record?.kinds.includes('executable')) return;
    const kinds = record.kinds.filter((k) => k !== 'executable');
    await this.deps.records.change(tenant, new Map([[id, kinds.length > 0 ? { ...record, kinds } : undefined]]));
  }

  /** The tenant's installed skills by name (every one, or those from `source`). */
  async installed(tenant: string, source?: string): Promise<Map<string, InstalledFrom>> {
    return source === undefined ? this.deps.records.all(tenant) : this.deps.records.fromSource(tenant, source);
  }

  private async placeAll(
    tenant: string,
    checked: CheckedSource,
    origin: { source: string; repo: FetchedRepository; root: string },
    body: SkillInstallBody,
    writer?: ScopedWriter,
  ) {
    const before = await this.deps.records.all(tenant);
    const refused = [...checked.refused];
    const accepted: CheckedSkill[] = [];
    for (const skill of checked.ok) {
      const mine = before.get(skill.name);
      const clash = body.overwrite
        ? undefined
        : await this.placer.clash(
            tenant,
            skill,
            mine !== undefined && sourceKey(mine.source) === sourceKey(origin.source),
          );
      if (clash) refused.push(clash);
      else accepted.push(skill);
    }
    if (body.dry_run) {
      const installed = await Promise.all(
        accepted.map(async (s) => ({
          name: s.name,
          path: s.path,
          kinds: s.kinds,
          replaced: await this.placer.replaces(tenant, s),
          awaiting_consent: s.kinds.includes('executable'),
          warnings: s.warnings,
        })),
      );
      return { installed, refused };
    }
    // A caller that gave up (504) while the source was fetched gets nothing installed behind its back.
    assertBeforeDeadline('installing skills');
    const placed: Placed[] = [];
    try {
      for (const skill of accepted) placed.push(await this.placer.place(tenant, skill, origin, writer));
      await this.deps.records.change(tenant, new Map(placed.map((p) => [p.report.name, p.record])));
    } catch (err) {
      await this.placer.undoAll(placed);
      throw err;
    } finally {
      await this.deps.tenants.refresh(tenant);
    }
    return { installed: placed.map((p) => p.report), refused };
  }

  /** Fetches one commit of a source (the host checked and pinned first). */
  private async fetch(remote: GitRemote, ref: string | undefined): Promise<FetchedRepository> {
    return this.deps.git.fetch(remote, await this.deps.guard.pin(remote), ref);
  }

  /** Checks each folder; an executable part's skill.json without `createdBy` is credited to its source. */
  private async check(
    folders: readonly TreeSkillFolder[],
    repo: FetchedRepository,
    source: string,
  ): Promise<CheckedSource> {
    const ok: CheckedSkill[] = [];
    const refused: RefusedSkill[] = [];
    // One git process reads every file the checks and the writes will need (each within the file limit), not one per
    // skill.
    const max = this.deps.limits.maxFileBytes;
    await repo.blobs(
      folders.flatMap((f) => f.entries.filter((e) => e.type === 'blob' && e.size <= max).map((e) => e.oid)),
    );
    for (const folder of folders) {
      const outcome = await checkSkillFolder(
        folder,
        (oids) => repo.blobs(oids),
        this.deps.limits,
        `git:${source}`.slice(0, 128),
      );
      if ('ok' in outcome) ok.push(outcome.ok);
      else refused.push(outcome.refused);
    }
    return { ok, refused };
  }

  private serially<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    const run = (this.lanes.get(tenant) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    this.lanes.set(tenant, tail);
    void tail.then(() => this.lanes.get(tenant) === tail && this.lanes.delete(tenant));
    return run;
  }
}

function notInSource(name: string, root: string): RefusedSkill {
  const message = `no skill folder named ${name} under "${root || '/'}" in the source`;
  return {
    name,
    path: root,
    kinds: [],
    reason: 'invalid',
    problems: [{ severity: 'error', field: 'skills', message, file: root || '/' }],
  };
}
