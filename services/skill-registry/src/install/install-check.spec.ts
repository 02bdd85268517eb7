import { createHash } from 'node:crypto';
import type { TreeEntry } from './git.client.js';
import { checkSkillFolder } from './install-check.js';
import { discoverInTree } from './repo-tree.js';

/** A commit's tree and blobs as git would list them, built from paths and contents (`{ link }` for a symlink). */
function commit(files: Record<string, string | { link: string } | { submodule: true }>) {
  const blobs = new Map<string, Buffer>();
  const tree: TreeEntry[] = Object.entries(files).map(([path, content]) => {
    if (typeof content === 'object' && 'submodule' in content)
      return { path, mode: '160000', type: 'commit', oid: 'f'.repeat(40), size: 0 };
    const bytes = Buffer.from(typeof content === 'string' ? content : content.link);
    const oid = createHash('sha1').update(bytes).digest('hex');
    blobs.set(oid, bytes);
    return { path, mode: typeof content === 'string' ? '100644' : '120000', type: 'blob', oid, size: bytes.length };
  });
  return { tree, read: async (oids: readonly string[]) => new Map(oids.map((o) => [o, blobs.get(o)!])) };
}

const md = (name: string) => `---\nname: ${name}\ndescription: Does ${name}. Use when testing.\n---\n# ${name}\n`;
const limits = { maxFileBytes: 1000, maxSkillBytes: 5000, maxFiles: 10 };

describe(discoverInTree.name, () => {
  it("should find skill folders by discovery's rules: stop at a skill, skip node_modules, .git; warn deeper", () => {
    const { tree } = commit({
      'README.md': '# hi',
      'a/SKILL.md': md('a'),
      'a/nested/SKILL.md': md('nested'),
      'group/b/SKILL.md': md('b'),
      'group/tool/skill.json': '{}',
      'node_modules/x/SKILL.md': md('x'),
      'one/two/three/four/five/SKILL.md': md('five'),
      vendor: { submodule: true },
    });
    const found = discoverInTree(tree, '', 'repo');
    expect(found.folders.map((f) => [f.dir, f.name])).toEqual([
      ['a', 'a'],
      ['group/b', 'b'],
      ['group/tool', 'tool'],
    ]);
    expect(found.folders[0]!.entries.map((e) => e.rel)).toEqual(['SKILL.md', 'nested/SKILL.md']);
    expect(found.warnings.map((w) => w.file)).toEqual(['vendor', 'one/two/three/four/five']);
  });

  it('should take a folder holding SKILL.md itself as one skill (a repository of one skill), named after it', () => {
    const { tree } = commit({ 'SKILL.md': md('repo'), 'scripts/run.sh': 'echo' });
    expect(discoverInTree(tree, '', 'repo').folders).toMatchObject([{ dir: '', name: 'repo' }]);
    expect(() => discoverInTree(tree, 'missing', 'repo')).toThrow(/no folder "missing"/);
  });
});

describe(checkSkillFolder.name, () => {
  const check = async (files: Parameters<typeof commit>[0], root = '') => {
    const { tree, read } = commit(files);
    const [folder] = discoverInTree(tree, root, 'repo').folders;
    return checkSkillFolder(folder!, read, limits, 'git:test');
  };

  it('should accept a valid skill and turn a link inside its folder into a copy of its target', async () => {
    const outcome = await check({
      's/ok/SKILL.md': md('ok'),
      's/ok/ref/guide.md': 'guide',
      's/ok/alias.md': { link: 'ref/guide.md' },
    });
    if (!('ok' in outcome)) throw new Error(`refused: ${JSON.stringify(outcome.refused)}`);
    expect([...outcome.ok.files.keys()]).toEqual(['SKILL.md', 'ref/guide.md', 'alias.md']);
    expect(outcome.ok.files.get('alias.md')).toBe(outcome.ok.files.get('ref/guide.md'));
  });

  it('should refuse a link leaving its folder, directly or through another link', async () => {
    const cases: Array<Parameters<typeof commit>[0]> = [
      { 's/x/SKILL.md': md('x'), 's/x/out': { link: '../../etc/passwd' } },
      { 's/x/SKILL.md': md('x'), 's/x/abs': { link: '/etc/passwd' } },
      {
        's/x/SKILL.md': md('x'),
        's/x/hop': { link: 'inner' },
        's/x/inner': { link: '../y/secret' },
        's/y/secret': 'no',
      },
    ];
    for (const files of cases) {
      const outcome = await check(files, 's');
      expect('refused' in outcome && outcome.refused.reason).toBe('escape');
    }
  });

  it('should refuse an oversized file and strict validation errors with file, line and field', async () => {
    const big = await check({ 'big/SKILL.md': md('big'), 'big/data.bin': 'x'.repeat(1001) });
    expect('refused' in big && big.refused).toMatchObject({
      reason: 'too_large',
      problems: [{ file: 'big/data.bin', field: 'file' }],
    });
    const bad = await check({ 'bad/SKILL.md': '---\nname: other\ndescription: d\nextra: 1\n---\nbody\n' });
    expect('refused' in bad && bad.refused.problems.map((p) => [p.file, p.line, p.field])).toEqual([
      ['bad/SKILL.md', 2, 'name'],
      ['bad/SKILL.md', 4, 'extra'],
    ]);
  });

  it('should check an executable part as POST /executable-skills does, crediting its source by default', async () => {
    const manifest = JSON.stringify({ id: 'tool', description: 'A tool', timeoutMs: 50 });
    const refused = await check({ 'tool/skill.json': manifest, 'tool/execute.ts': 'module.exports = 1' });
    expect('refused' in refused && refused.refused.problems.map((p) => p.field)).toEqual(['timeoutMs', 'code']);
    const ok = await check({
      'tool/skill.json': JSON.stringify({ id: 'tool', description: 'A tool' }),
      'tool/execute.ts': 'export async function execute() { return { success: true }; }',
    });
    expect('ok' in ok && ok.ok).toMatchObject({
      kinds: ['executable'],
      manifest: { id: 'tool', name: 'tool', version: '1.0.0', createdBy: 'git:test' },
    });
  });
});
