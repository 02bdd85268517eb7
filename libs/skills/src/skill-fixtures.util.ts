import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Test helper: writes `<root>/<rel>/SKILL.md` (or `<root>/<rel>` when rel ends in .md) with a minimal frontmatter. */
export async function writeSkill(
  root: string,
  rel: string,
  name: string,
  description = `The ${name} skill.`,
  body = 'Body\n',
) {
  const file = rel.endsWith('.md') ? join(root, rel) : join(root, rel, 'SKILL.md');
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `---\nname: ${name}\ndescription: ${description}\n---\n${body}`);
  return file;
}
