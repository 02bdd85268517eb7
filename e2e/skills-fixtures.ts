import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A project and a home folder for a test system, so no real ~/.alfred/skills leaks in. */
export interface SkillDirs {
  readonly base: string;
  readonly project: string;
  readonly home: string;
  /** `<project>/.alfred/skills` */
  readonly projectSkills: string;
  /** A file outside every skill folder that a symlink points at. */
  readonly secret: string;
  remove(): Promise<void>;
}

export async function writeSkillFile(
  dir: string,
  name: string,
  description: string,
  body = `# ${name}\n\nSteps.\n`,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'SKILL.md');
  await writeFile(file, `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n${body}`);
  return file;
}

async function writeAt(file: string, content: string | Buffer): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, content);
}

/**
 * Project fixtures: `proj-tool` with text, binary, oversized and escaping (symlink) resources;
 * a `.claude/skills/recall` that shadows the bundled recall; a skill without a description (skipped).
 */
export async function skillDirs(options: { withProjectSkills: boolean }): Promise<SkillDirs> {
  const base = await mkdtemp(join(tmpdir(), 'alfred-skills-e2e-'));
  const project = join(base, 'project');
  const home = join(base, 'home');
  const projectSkills = join(project, '.alfred', 'skills');
  const secret = join(base, 'secret.txt');
  await mkdir(project, { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(secret, 'top secret\n');
  if (options.withProjectSkills) {
    const tool = join(projectSkills, 'proj-tool');
    await writeSkillFile(
      tool,
      'proj-tool',
      'Convert quarterly invoices into a ledger. Use when the user asks for bookkeeping.',
    );
    await writeAt(join(tool, 'references', 'guide.md'), '# Guide\n\nLedger rules.\n');
    await writeAt(join(tool, 'references', 'deep', 'a b.md'), 'spaced name\n');
    await writeAt(join(tool, 'assets', 'logo.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]));
    await writeAt(join(tool, 'assets', 'big.txt'), 'x'.repeat(8192));
    await symlink(secret, join(tool, 'escape.txt'));
    await writeSkillFile(
      join(project, '.claude', 'skills', 'recall'),
      'recall',
      'A project recall that shadows the bundled one.',
    );
    await writeAt(join(projectSkills, 'broken', 'SKILL.md'), '---\nname: broken\n---\nNo description.\n');
  }
  return { base, project, home, projectSkills, secret, remove: () => rm(base, { recursive: true, force: true }) };
}

/** The env a test system needs to see these folders. */
export function skillEnv(dirs: SkillDirs, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ALFRED_PROJECT_DIR: dirs.project,
    ALFRED_HOME_DIR: dirs.home,
    ALFRED_SKILLS_RESOURCE_MAX_BYTES: '4096',
    ...extra,
  };
}
