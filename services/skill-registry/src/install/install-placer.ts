import { createHash } from 'node:crypto';
import type { InstalledFrom, InstalledSkill, RefusedSkill, ScopedWriter, SkillProblem } from '#contracts';
import type { ExecutableSkillCatalog } from '../executable/executable-skill.catalog.js';
import type { SkillProvenanceRepository } from '../records/skill-provenance.repository.js';
import type { TenantSkills } from '../tenant-skills.js';
import type { FetchedRepository } from './git.client.js';
import type { CheckedSkill } from './install-check.js';

/** Where placed skills come from: the source, the fetched commit, and the folder the install searched. */
export interface Origin {
  readonly source: string;
  readonly repo: FetchedRepository;
  readonly root: string;
}

/** A skill written into the tenant's catalog: what to report, what to record, and how to take it back. */
export interface Placed {
  readonly report: InstalledSkill;
  readonly record: InstalledFrom;
  /** The folder's files (path → SHA-256 of the content) and SKILL.md's text, as written. */
  readonly files: Map<string, string>;
  readonly skillMd?: string;
  undo(): Promise<void>;
}

export interface PlacerDeps {
  readonly tenants: TenantSkills;
  readonly executables: ExecutableSkillCatalog;
  readonly provenance?: SkillProvenanceRepository;
  readonly now: () => Date;
}

/**
 * Writes checked skill folders into a tenant's catalog: the SKILL.md part among the tenant's own skills, the
 * executable part among its executable skills (waiting for consent), and who installed it as its provenance.
 * A failure takes back what this skill wrote; `undoAll` takes back a batch.
 */
export class InstallPlacer {
  constructor(private readonly deps: PlacerDeps) {}

  /** A clash with a skill the tenant already sees, as the problem that refuses it (undefined: no clash). */
  async clash(tenant: string, skill: CheckedSkill, installedHere: boolean): Promise<RefusedSkill | undefined> {
    const problems: SkillProblem[] = [];
    const file = skill.path ? `${skill.path}/` : '/';
    if (skill.kinds.includes('skill')) {
      const seen = await this.deps.tenants.visible(tenant, skill.name);
      if (seen) {
        const whose = installedHere
          ? 'installed from this source already (update it instead)'
          : seen.own
            ? "the tenant's own"
            : 'shared, read-only';
        problems.push({
          severity: 'error',
          field: 'name',
          file,
          message:
            `a skill named ${skill.name} already exists at ${seen.location} (${whose}); "overwrite": ` +
            `true replaces it${seen.own ? '' : ' for this tenant'}`,
        });
      }
    }
    const holder = skill.kinds.includes('executable') ? this.deps.executables.holder(tenant, skill.name) : undefined;
    if (holder) {
      problems.push({
        severity: 'error',
        field: 'id',
        file,
        message:
          `an executable skill ${skill.name} already exists ` +
          `(${holder === 'own' ? "the tenant's own" : 'shared'}); "overwrite": true replaces it for this tenant`,
      });
    }
    return problems.length > 0
      ? { name: skill.name, path: skill.path, kinds: skill.kinds, reason: 'clash', problems }
      : undefined;
  }

  /** Whether placing `skill` would replace or shadow something the tenant sees. */
  async replaces(tenant: string, skill: CheckedSkill): Promise<boolean> {
    const md = skill.kinds.includes('skill') && (await this.deps.tenants.visible(tenant, skill.name)) !== undefined;
    return md || (skill.kinds.includes('executable') && this.deps.executables.holder(tenant, skill.name) !== undefined);
  }

  /** Places one skill; `previous` is its record when it was installed before (kept: installed_at). */
  async place(
    tenant: string,
    skill: CheckedSkill,
    origin: Origin,
    writer: ScopedWriter | undefined,
    previous?: InstalledFrom,
  ): Promise<Placed> {
    const replaced = await this.replaces(tenant, skill);
    const files = filesToWrite(skill, await origin.repo.blobs([...skill.files.values()]));
    const undos: Array<() => Promise<void>> = [];
    let awaiting = false;
    const write = async () => {
      if (skill.kinds.includes('skill')) {
        const placed = await this.deps.tenants.place(tenant, skill.name, files);
        undos.push(placed.undo);
        await placed.done();
      }
      if (skill.kinds.includes('executable')) {
        const installed = await this.deps.executables.install(tenant, skill.name, files);
        undos.push(installed.undo);
        awaiting = installed.skill.status === 'awaiting_consent';
      }
    };
    const undo = async () => {
      for (const step of undos.reverse()) await step().catch(() => undefined);
    };
    try {
      await this.withProvenance(tenant, skill, writer, write);
    } catch (err) {
      await undo();
      throw err;
    }
    const now = this.deps.now().toISOString();
    const record: InstalledFrom = {
      source: origin.source,
      ref: origin.repo.ref,
      commit: origin.repo.commit,
      path: skill.path,
      root: origin.root,
      kinds: skill.kinds,
      installed_at: previous?.installed_at ?? now,
      ...(previous ? { updated_at: now } : {}),
    };
    const report = {
      name: skill.name,
      path: skill.path,
      kinds: skill.kinds,
      replaced,
      awaiting_consent: awaiting,
      warnings: skill.warnings,
    };
    const skillMd = files.get('SKILL.md')?.toString('utf8');
    return { report, record, files: hashes(files), ...(skillMd === undefined ? {} : { skillMd }), undo };
  }

  async undoAll(placed: readonly Placed[]): Promise<void> {
    for (const p of [...placed].reverse()) await p.undo();
  }

  /**
   * Who installed it is recorded before the write and put back if the write fails (SkillProvenanceRepository.around).
   */
  private async withProvenance(
    tenant: string,
    skill: CheckedSkill,
    writer: ScopedWriter | undefined,
    write: () => Promise<void>,
  ): Promise<void> {
    const pv = this.deps.provenance;
    if (!pv || !writer) return write();
    const executable = () =>
      skill.kinds.includes('executable') ? pv.around(tenant, 'executable', skill.name, writer, write) : write();
    await (skill.kinds.includes('skill') ? pv.around(tenant, 'skill', skill.name, writer, executable) : executable());
  }
}

/**
 * The files a checked skill is written as: the repository's, with an executable part's skill.json as the checks read
 * it (the defaults a created skill gets filled in), so the catalog loads exactly what was checked.
 */
export function filesToWrite(skill: CheckedSkill, blobs: ReadonlyMap<string, Buffer>): Map<string, Buffer> {
  const files = new Map([...skill.files].map(([rel, oid]) => [rel, blobs.get(oid) ?? Buffer.alloc(0)]));
  if (skill.manifest) files.set('skill.json', Buffer.from(`${JSON.stringify(skill.manifest, null, 2)}\n`));
  return files;
}

/** path → SHA-256 of the content: what an update compares the installed folder with. */
export function hashes(files: ReadonlyMap<string, Buffer>): Map<string, string> {
  return new Map([...files].map(([rel, bytes]) => [rel, createHash('sha256').update(bytes).digest('hex')]));
}
