import { randomBytes } from 'node:crypto';
import type { FixtureFile } from '#testing';

/** A SKILL.md of `name` (its folder's name) with a body. */
export const skillMd = (name: string, description: string, body = `# ${name}\n\nSteps.\n`) =>
  `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\nlicense: MIT\n---\n${body}`;

export const RUNNER_CODE = (n: number) => `export async function execute(args: { text: string }) {
  return { success: true, result: { echoed: args.text, version: ${n} } };
}`;

const manifest = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify(
    {
      id,
      description: 'Echoes its text argument back. Use when testing installs.',
      parameters: { text: { type: 'string', required: true } },
      ...extra,
    },
    null,
    2,
  );

/** Largest file an install takes in these tests (ALFRED_SKILLS_INSTALL_MAX_FILE_BYTES). */
export const MAX_FILE_BYTES = 65_536;

/**
 * The collection's first commit: two valid skills (one with a resource and an internal link), an executable skill
 * (SKILL.md + skill.json + execute.ts), and what must be refused: a SKILL.md breaking the rules, a symlink leaving its
 * folder, an oversized file, a broken executable, and a skill named like a bundled one (a clash).
 */
export function firstCommit(): Record<string, FixtureFile> {
  return {
    'README.md': '# A collection of skills\n',
    'skills/pdf-tables/SKILL.md': skillMd(
      'pdf-tables',
      'Extract tables from PDF invoices into CSV. Use when the user has PDF invoices.',
      '# PDF tables\n\nRun the extractor.\nKeep headers.\n',
    ),
    'skills/pdf-tables/references/guide.md': '# Guide\n\nColumns first.\n',
    'skills/pdf-tables/guide-link.md': { link: 'references/guide.md' },
    'skills/git-hygiene/SKILL.md': skillMd(
      'git-hygiene',
      'Keep commits small and messages honest. Use when committing.',
    ),
    'skills/echo-tool/SKILL.md': skillMd(
      'echo-tool',
      'Echo text back through an executable skill. Use when testing tools.',
    ),
    'skills/echo-tool/skill.json': manifest('echo-tool'),
    'skills/echo-tool/execute.ts': RUNNER_CODE(1),
    'skills/broken-rules/SKILL.md': '---\nname: Broken_Rules\nunknown-key: 1\n---\nNo description.\n',
    'skills/escaper/SKILL.md': skillMd('escaper', 'Looks harmless. Use when never.'),
    'skills/escaper/secrets.txt': { link: '../../../../etc/passwd' },
    'skills/heavy/SKILL.md': skillMd('heavy', 'Carries a large file. Use when never.'),
    'skills/heavy/data.bin': randomBytes(MAX_FILE_BYTES + 1),
    'skills/bad-exec/skill.json': manifest('bad-exec', { timeoutMs: 5 }),
    'skills/bad-exec/execute.ts': 'module.exports.execute = () => 1;\n',
    'skills/recall/SKILL.md': skillMd(
      'recall',
      'A recall that clashes with the bundled one. Use when testing clashes.',
    ),
  };
}

/** The second commit: pdf-tables' SKILL.md and the executable's code changed, git-hygiene gone, a new skill added. */
export function secondCommit(first: Record<string, FixtureFile>): Record<string, FixtureFile> {
  const next = { ...first };
  next['skills/pdf-tables/SKILL.md'] = skillMd(
    'pdf-tables',
    'Extract tables from PDF invoices into CSV. Use when the user has PDF invoices.',
    '# PDF tables\n\nRun the extractor twice.\nKeep headers.\n',
  );
  next['skills/echo-tool/execute.ts'] = RUNNER_CODE(2);
  delete next['skills/git-hygiene/SKILL.md'];
  next['skills/new-arrival/SKILL.md'] = skillMd(
    'new-arrival',
    'Arrived in the second commit. Use when checking updates.',
  );
  return next;
}
