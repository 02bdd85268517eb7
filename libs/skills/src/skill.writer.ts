import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ErrorCode, SkillCreateBody, type SkillProblem } from '#contracts';
import { AlfredError } from '#errors';
import { parseSkillFile } from './frontmatter.parser.js';
import { validateSkill, ValidationMode } from './skill.validator.js';

/** The text of a SKILL.md; the frontmatter is emitted by the YAML library so quoting is always right. */
export function renderSkillFile(input: SkillCreateBody): string {
  const fm: Record<string, unknown> = { name: input.name, description: input.description };
  if (input.license !== undefined) fm.license = input.license;
  if (input.compatibility !== undefined) fm.compatibility = input.compatibility;
  if (input.metadata !== undefined) fm.metadata = input.metadata;
  const yaml = stringify(fm, { lineWidth: 0 });
  const body = input.body.endsWith('\n') || input.body === '' ? input.body : `${input.body}\n`;
  return `---\n${yaml}---\n${body}`;
}

/** Strict problems of a would-be skill, checked on the exact text that would be written. */
export function checkNewSkill(input: SkillCreateBody, file: string): SkillProblem[] {
  const parsed = parseSkillFile(renderSkillFile(input), file);
  const result = validateSkill(parsed, { file, expectedName: input.name, mode: ValidationMode.Strict });
  return result.problems.filter((p) => p.severity === 'error');
}

/**
 * Writes `<root>/<name>/SKILL.md` after strict validation. The folder is created exclusively,
 * so a concurrent create of the same name fails with CONFLICT instead of overwriting.
 */
export async function writeNewSkill(raw: unknown, root: string): Promise<{ name: string; path: string }> {
  const parsedBody = SkillCreateBody.safeParse(raw);
  if (!parsedBody.success) {
    throw new AlfredError(ErrorCode.ValidationFailed, 'invalid skill', { issues: parsedBody.error.issues });
  }
  const input = parsedBody.data;
  const dir = join(root, input.name);
  const file = join(dir, 'SKILL.md');
  const errors = checkNewSkill(input, file);
  if (errors.length > 0) {
    const summary = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    throw new AlfredError(ErrorCode.ValidationFailed, `invalid skill: ${summary}`, { problems: errors });
  }
  await mkdir(root, { recursive: true });
  try {
    await mkdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new AlfredError(ErrorCode.Conflict, `a skill folder ${input.name} already exists in ${root}`, {
        name: input.name,
        path: dir,
      });
    }
    throw err;
  }
  await writeFile(file, renderSkillFile(input), { flag: 'wx' });
  return { name: input.name, path: file };
}
