import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SkillManifest, type SkillManifestInput } from '#contracts';

/** A temp workspace with a skills folder and a data root; tests create skill folders in it. */
export class SkillWorkspace {
  private constructor(readonly root: string) {}

  static async create(): Promise<SkillWorkspace> {
    // A 0700 folder, as an operator's own would be: sandboxes never need to pass through it.
    const root = await mkdtemp(path.join(os.tmpdir(), 'alfred-sandbox-'));
    return new SkillWorkspace(root);
  }

  get dataRoot(): string {
    return path.join(this.root, 'data');
  }

  /** Where a tenant's data roots (`skill-data/<id>`, `shared/<name>`) live. */
  tenantData(tenant: string): string {
    return path.join(this.dataRoot, 'tenants', encodeURIComponent(tenant).replace(/\./g, '%2E'));
  }

  skillDir(id: string): string {
    return path.join(this.root, 'skills', id);
  }

  /** Writes skills/<id>/skill.json and execute.ts; returns the folder and the parsed manifest. */
  async addSkill(
    id: string,
    code: string,
    manifest: Partial<SkillManifestInput> = {},
  ): Promise<{ dir: string; manifest: SkillManifest }> {
    const dir = this.skillDir(id);
    await mkdir(dir, { recursive: true });
    const parsed = SkillManifest.parse({
      id,
      name: id,
      description: `test skill ${id}`,
      version: '1.0.0',
      createdBy: 'test',
      ...manifest,
    });
    await writeFile(path.join(dir, 'skill.json'), JSON.stringify(parsed, null, 2));
    await writeFile(path.join(dir, 'execute.ts'), code);
    return { dir, manifest: parsed };
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

export const TEST_CALLER = { tenant: 'test', agent: 'tester' } as const;

/**
 * Jest's per-test timeout for sandbox tests. Each attack keeps its own short kill timeout (the manifest's
 * timeoutMs); this only keeps a loaded CI machine (many suites on two cores) from failing a slow spawn.
 */
export const SANDBOX_TEST_TIMEOUT_MS = 30_000;
