import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { discoverSkills, findSkillCandidates } from './skill-discovery.js';
import { validateSkillFile } from './validate.command.js';

const bundledDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'skills');
const NAMES = ['checkpoint', 'compact', 'distill', 'learn', 'recall', 'remediate', 'remember', 'skills'];

function bashBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

describe('bundled skills', () => {
  it('should ship exactly the expected skills, all loaded', async () => {
    const found = await discoverSkills([{ dir: bundledDir, source: 'bundled' }]);
    expect(found.skills.map((s) => s.name)).toEqual(NAMES);
    expect(found.skipped).toEqual([]);
    expect(found.warnings).toEqual([]);
  });

  it.each(NAMES)('should validate %s strictly with zero problems', async (name) => {
    const { candidates } = await findSkillCandidates(bundledDir);
    const candidate = candidates.find((c) => c.expectedName === name)!;
    const report = await validateSkillFile(candidate);
    expect(report).toMatchObject({ skill: name, valid: true, errors: [], warnings: [] });
  });

  it.each(NAMES)('should give %s runnable curl blocks against $ALFRED_API_URL without <placeholders>', async (name) => {
    const text = await readFile(resolve(bundledDir, name, 'SKILL.md'), 'utf8');
    const blocks = bashBlocks(text);
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      expect(block).toContain('"$ALFRED_API_URL/');
      // Every call acts for the running agent (and its caller's key), never silently for the default agent.
      for (const curl of block.split(/\n(?=\S)/).filter((c) => c.includes('curl '))) {
        expect(curl).toContain('-H "X-Alfred-Agent: ${ALFRED_AGENT:-alfred}"');
        expect(curl).toContain('-H "Authorization: Bearer ${ALFRED_API_KEY:-}"');
      }
      expect(block).not.toMatch(/<[a-z_ -]+>/i);
      expect(block).not.toMatch(/localhost|127\.0\.0\.1/);
    }
  });
});
