import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import {
  ErrorCode,
  SKILL_DIFF_MAX_CHARS,
  type InstalledFrom,
  type InstalledSkill,
  type RefusedSkill,
  type ScopedWriter,
  type SkillSourceUpdate,
  type SkillUpdateChange,
  type SkillUpdateResult,
} from '#contracts';
import { AlfredError } from '#errors';
import { assertBeforeDeadline } from '#bus';
import type { ExecutableSkillCatalog } from '../executable/executable-skill.catalog.js';
import type { TenantSkills } from '../tenant-skills.js';
import { parseSource, sourceKey, type GitRemote, type SourcePolicy } from './git-source.js';
import type { FetchedRepository } from './git.client.js';
import type { CheckedSkill } from './install-check.js';
import { filesToWrite, hashes, type InstallPlacer, type Placed } from './install-placer.js';
import type { InstallRecordsRepository } from './install-records.repository.js';
import { discoverInTree, type TreeSkillFolder } from './repo-tree.js';
import { fitUpdateReply } from './reply-size.js';
import type { CheckedSource } from './skill-install.service.js';

export interface SourceUpdaterDeps {
  readonly tenants: TenantSkills;
  readonly executables: ExecutableSkillCatalog;
  readonly records: InstallRecordsRepository;
  readonly policy: SourcePolicy;
  readonly placer: InstallPlacer;
  readonly fetch: (remote: GitRemote, ref: string) => Promise<FetchedRepository>;
  readonly check: (
    folders: readonly TreeSkillFolder[],
    repo: FetchedRepository,
    source: string,
  ) => Promise<CheckedSource>;
}

type Group = { source: string; ref: string; records: Map<string, InstalledFrom> };

/**
 * Updates of installed skills: each source (and ref) is fetched once at its ref's newest commit; every skill of it
 * whose folder changed is checked again and replaced (same name, so its outcomes and feedback stay), with its
 * SKILL.md's change as a unified diff; a new version that fails a check leaves the installed one as it was. An update
 * of a whole source also installs skills new to it, under the usual clash rule.
 */
export class SourceUpdater {
  constructor(private readonly deps: SourceUpdaterDeps) {}

  async update(
    tenant: string,
    target: { name?: string; source?: string; overwrite: boolean },
    writer?: ScopedWriter,
  ): Promise<SkillUpdateResult> {
    const all = await this.deps.records.all(tenant);
    const chosen = await this.choose(tenant, all, target);
    const sources: SkillSourceUpdate[] = [];
    for (const group of groups(chosen))
      sources.push(await this.updateGroup(tenant, group, target.name === undefined, target.overwrite, writer));
    return fitUpdateReply({ sources });
  }

  private async choose(
    tenant: string,
    all: Map<string, InstalledFrom>,
    target: { name?: string; source?: string },
  ): Promise<Map<string, InstalledFrom>> {
    if (target.name !== undefined) {
      const record = all.get(target.name);
      if (record) return new Map([[target.name, record]]);
      if (await this.deps.tenants.visible(tenant, target.name)) {
        throw new AlfredError(
          ErrorCode.BadRequest,
          `skill ${target.name} was not installed from git: there is no source to update it from`,
          { name: target.name },
        );
      }
      throw AlfredError.notFound('skill', target.name);
    }
    if (target.source === undefined) return all;
    const key = sourceKey(target.source);
    const matching = new Map([...all].filter(([, r]) => sourceKey(r.source) === key));
    if (matching.size === 0)
      throw new AlfredError(ErrorCode.NotFound, `no skill of this tenant was installed from ${target.source}`, {
        source: target.source,
      });
    return matching;
  }

  private async updateGroup(
    tenant: string,
    group: Group,
    wholeSource: boolean,
    overwrite: boolean,
    writer?: ScopedWriter,
  ): Promise<SkillSourceUpdate> {
    const remote = parseSource(group.source, this.deps.policy);
    const repo = await this.deps.fetch(remote, group.ref);
    try {
      const tree = await repo.tree();
      const folders = new Map<string, TreeSkillFolder>();
      for (const root of new Set([...group.records.values()].map((r) => r.root))) {
        try {
          for (const f of discoverInTree(tree, root, remote.name).folders) folders.set(f.dir, f);
        } catch {
          // The folder the install searched is gone: its skills are reported gone upstream.
        }
      }
      const result: SkillSourceUpdate = {
        source: group.source,
        ref: repo.ref,
        commit: repo.commit,
        updated: [],
        unchanged: [],
        added: [],
        gone_upstream: [],
        refused: [],
      };
      const origin = (root: string) => ({ source: group.source, repo, root });
      const placed: Placed[] = [];
      const records = new Map<string, InstalledFrom>();
      assertBeforeDeadline('updating skills');
      try {
        await this.moveInstalled(tenant, group, folders, repo, origin, writer, result, placed, records);
        if (wholeSource)
          await this.addNew(tenant, group, folders, repo, origin, overwrite, writer, result, placed, records);
        await this.deps.records.change(tenant, records);
      } catch (err) {
        await this.deps.placer.undoAll(placed);
        throw err;
      } finally {
        await this.deps.tenants.refresh(tenant);
      }
      return result;
    } finally {
      await repo.dispose();
    }
  }

  private async moveInstalled(
    tenant: string,
    group: Group,
    folders: Map<string, TreeSkillFolder>,
    repo: FetchedRepository,
    origin: (root: string) => { source: string; repo: FetchedRepository; root: string },
    writer: ScopedWriter | undefined,
    result: SkillSourceUpdate,
    placed: Placed[],
    records: Map<string, InstalledFrom>,
  ): Promise<void> {
    for (const [name, record] of group.records) {
      const folder = folders.get(record.path);
      if (!folder || folder.name !== name) {
        result.gone_upstream.push(name);
        continue;
      }
      if (record.commit === repo.commit) {
        result.unchanged.push(name);
        continue;
      }
      const checked = await this.deps.check([folder], repo, group.source);
      if (checked.refused.length > 0) {
        result.refused.push(...checked.refused);
        continue;
      }
      const skill = checked.ok[0]!;
      const before = await this.installedFiles(tenant, name, record);
      const next = hashes(await this.blobsOf(repo, skill));
      if (sameFiles(before.files, next) && sameKinds(record, skill)) {
        result.unchanged.push(name);
        records.set(name, { ...record, commit: repo.commit, ref: repo.ref });
        continue;
      }
      const p = await this.deps.placer.place(tenant, skill, origin(record.root), writer, record);
      placed.push(p);
      records.set(name, p.record);
      result.updated.push(change(name, record.commit, repo.commit, before, p));
    }
  }

  private async addNew(
    tenant: string,
    group: Group,
    folders: Map<string, TreeSkillFolder>,
    repo: FetchedRepository,
    origin: (root: string) => { source: string; repo: FetchedRepository; root: string },
    overwrite: boolean,
    writer: ScopedWriter | undefined,
    result: SkillSourceUpdate,
    placed: Placed[],
    records: Map<string, InstalledFrom>,
  ): Promise<void> {
    const known = new Set([...group.records.values()].map((r) => r.path));
    const fresh = [...folders.values()].filter((f) => !known.has(f.dir) && !group.records.has(f.name));
    const checked = await this.deps.check(fresh, repo, group.source);
    result.refused.push(...checked.refused);
    const rootOf = (skill: CheckedSkill) =>
      [...group.records.values()]
        .map((r) => r.root)
        .find((root) => root === '' || skill.path === root || skill.path.startsWith(`${root}/`)) ?? '';
    for (const skill of checked.ok) {
      const clash: RefusedSkill | undefined = overwrite
        ? undefined
        : await this.deps.placer.clash(tenant, skill, false);
      if (clash) {
        result.refused.push(clash);
        continue;
      }
      const p = await this.deps.placer.place(tenant, skill, origin(rootOf(skill)), writer);
      placed.push(p);
      records.set(skill.name, p.record);
      result.added.push(p.report satisfies InstalledSkill);
    }
  }

  /** The installed folder's files and SKILL.md text (the executable part's for a skill without SKILL.md). */
  private async installedFiles(
    tenant: string,
    name: string,
    record: InstalledFrom,
  ): Promise<{ files: Map<string, string>; skillMd: string }> {
    if (record.kinds.includes('skill')) {
      const skillMd = await readFile(join(this.deps.tenants.folderOf(tenant, name), 'SKILL.md'), 'utf8').catch(
        () => '',
      );
      return { files: await this.deps.tenants.filesOf(tenant, name), skillMd };
    }
    return { files: this.deps.executables.fileHashes(tenant, name), skillMd: '' };
  }

  private async blobsOf(repo: FetchedRepository, skill: CheckedSkill): Promise<Map<string, Buffer>> {
    return filesToWrite(skill, await repo.blobs([...skill.files.values()]));
  }
}

function groups(records: Map<string, InstalledFrom>): Group[] {
  const byKey = new Map<string, Group>();
  for (const [name, record] of records) {
    const key = `${sourceKey(record.source)}\u0000${record.ref}`;
    let group = byKey.get(key);
    if (!group) byKey.set(key, (group = { source: record.source, ref: record.ref, records: new Map() }));
    group.records.set(name, record);
  }
  return [...byKey.values()];
}

function change(
  name: string,
  from: string,
  to: string,
  before: { files: Map<string, string>; skillMd: string },
  placed: Placed,
): SkillUpdateChange {
  const after = placed.files;
  const full =
    (placed.skillMd ?? '') === before.skillMd
      ? ''
      : createTwoFilesPatch(
          `a/${name}/SKILL.md`,
          `b/${name}/SKILL.md`,
          before.skillMd,
          placed.skillMd ?? '',
          from.slice(0, 12),
          to.slice(0, 12),
        );
  return {
    name,
    from_commit: from,
    to_commit: to,
    diff: full.slice(0, SKILL_DIFF_MAX_CHARS),
    diff_truncated: full.length > SKILL_DIFF_MAX_CHARS,
    files: {
      added: [...after.keys()].filter((p) => !before.files.has(p)).sort(),
      removed: [...before.files.keys()].filter((p) => !after.has(p)).sort(),
      changed: [...after]
        .filter(([p, h]) => before.files.has(p) && before.files.get(p) !== h)
        .map(([p]) => p)
        .sort(),
    },
    awaiting_consent: placed.report.awaiting_consent,
  };
}

function sameFiles(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([p, h]) => b.get(p) === h);
}

function sameKinds(record: InstalledFrom, skill: CheckedSkill): boolean {
  return record.kinds.length === skill.kinds.length && record.kinds.every((k) => skill.kinds.includes(k));
}
