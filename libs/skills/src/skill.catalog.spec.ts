import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlfredError } from '#errors';
import { SkillCatalog } from './skill.catalog.js';
import type { SkillRoot } from './skill-discovery.js';
import { writeSkill } from './skill-fixtures.util.js';

/** Waits for the watching catalog's reloads (its `change` events) until `probe` holds. */
async function until(watching: SkillCatalog, probe: () => boolean, deadlineMs = 5000): Promise<void> {
  const deadline = AbortSignal.timeout(deadlineMs);
  try {
    while (!probe()) await once(watching, 'change', { signal: deadline });
  } catch (err) {
    throw deadline.aborted ? new Error('condition not met before the deadline') : err;
  }
}

async function caught(fn: () => unknown): Promise<AlfredError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof AlfredError) return err;
    throw err;
  }
  throw new Error('expected an AlfredError');
}

describe(SkillCatalog.name, () => {
  let tmp: string;
  let project: SkillRoot;
  let bundled: SkillRoot;
  let catalog: SkillCatalog;

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'alfred-catalog-'));
    project = { dir: join(tmp, 'project'), source: 'project' };
    bundled = { dir: join(tmp, 'bundled'), source: 'bundled' };
    catalog = new SkillCatalog({
      roots: [project, bundled],
      debounceMs: 50,
      resources: { maxBytes: 1024, maxEntries: 100 },
    });
  });
  afterEach(async () => {
    await catalog.close();
    await rm(tmp, { recursive: true, force: true });
  });

  describe('reload', () => {
    it('should report added, changed and removed skills', async () => {
      await writeSkill(bundled.dir, 'alpha', 'alpha');
      await writeSkill(bundled.dir, 'beta', 'beta');
      expect(await catalog.reload()).toEqual({ added: ['alpha', 'beta'], removed: [], changed: [] });
      expect(await catalog.reload()).toEqual({ added: [], removed: [], changed: [] });
      await writeSkill(bundled.dir, 'alpha', 'alpha', 'Edited.');
      await rm(join(bundled.dir, 'beta'), { recursive: true });
      await writeSkill(bundled.dir, 'gamma', 'gamma');
      expect(await catalog.reload()).toEqual({ added: ['gamma'], removed: ['beta'], changed: ['alpha'] });
      expect(catalog.getBody('alpha').description).toBe('Edited.');
    });
  });

  describe('watch', () => {
    it('should pick up a new skill and an edit without an explicit reload', async () => {
      await writeSkill(bundled.dir, 'alpha', 'alpha');
      await catalog.reload();
      const events: unknown[] = [];
      catalog.on('change', (c) => events.push(c));
      catalog.watch();
      await writeSkill(join(bundled.dir, '.curated'), 'fresh', 'fresh');
      await until(catalog, () => catalog.has('fresh'));
      const before = catalog.getBody('alpha').version;
      await writeFile(join(bundled.dir, 'alpha', 'ref.md'), 'new resource');
      await until(catalog, () => catalog.getBody('alpha').version !== before);
      expect(events).toContainEqual({ added: ['fresh'], removed: [], changed: [] });
    });

    it('should see in-place edits of a SKILL.md that was replaced by rename (an editor saving, sed -i)', async () => {
      await writeSkill(bundled.dir, 'alpha', 'alpha', 'First.');
      await catalog.reload();
      catalog.watch();
      const file = join(bundled.dir, 'alpha', 'SKILL.md');
      const text = await readFile(file, 'utf8');
      await writeFile(`${file}.tmp`, text.replace('First.', 'Renamed over.'));
      await rename(`${file}.tmp`, file);
      await until(catalog, () => catalog.getBody('alpha').description === 'Renamed over.');
      // The old inode is gone: only a watch on the folder sees these.
      await writeFile(file, text.replace('First.', 'Edited in place.'));
      await until(catalog, () => catalog.getBody('alpha').description === 'Edited in place.');
      await writeFile(file, text.replace('First.', 'Edited again.'));
      await until(catalog, () => catalog.getBody('alpha').description === 'Edited again.');
    });

    it('should start watching a root that only appears later, after a reload', async () => {
      catalog.watch();
      await writeSkill(project.dir, 'first', 'first');
      await catalog.reload();
      await writeSkill(project.dir, 'second', 'second');
      await until(catalog, () => catalog.has('second'));
    });

    it('should notice a root that appears later without any reload', async () => {
      const deep = { dir: join(tmp, 'project2', '.alfred', 'skills'), source: 'project' as const };
      await mkdir(join(tmp, 'project2'));
      const late = new SkillCatalog({ roots: [deep], debounceMs: 50 });
      try {
        await late.reload();
        late.watch();
        await writeSkill(deep.dir, 'arrived', 'arrived');
        await until(late, () => late.has('arrived'));
        await writeSkill(deep.dir, 'second', 'second');
        await until(late, () => late.has('second'));
      } finally {
        await late.close();
      }
    });
  });

  describe('renderIndexMarkdown', () => {
    it('should render exactly the seeds/001 shape, ordered by name', async () => {
      await writeSkill(bundled.dir, 'zeta', 'zeta', 'Last one.');
      await writeSkill(project.dir, 'alpha', 'alpha', 'First one: with a colon.');
      await catalog.reload();
      expect(catalog.renderIndexMarkdown()).toEqual({
        text: '## Available skills\n- **alpha** — First one: with a colon.\n- **zeta** — Last one.\n',
        truncated: { shortened: 0, dropped: [] },
      });
    });

    it('should render nothing when there are no skills', async () => {
      await catalog.reload();
      expect(catalog.renderIndexMarkdown().text).toBe('');
      expect(catalog.renderIndexXml().text).toBe('');
    });

    it('should shorten descriptions before dropping skills, and say which', async () => {
      const long =
        'Does the first thing well. Then it explains a great many further details that nobody needs in an index.';
      await writeSkill(project.dir, 'alpha', 'alpha', long);
      await writeSkill(bundled.dir, 'beta', 'beta', long);
      await writeSkill(bundled.dir, 'gamma', 'gamma', long);
      await catalog.reload();
      const full = catalog.renderIndexMarkdown().text;
      const shortened = catalog.renderIndexMarkdown({ budget: full.length - 10 });
      expect(shortened.truncated).toEqual({ shortened: 3, dropped: [] });
      expect(shortened.text).toContain('- **beta** — Does the first thing well.\n');
      const tight = catalog.renderIndexMarkdown({ budget: 90 });
      expect(tight.truncated.dropped).toEqual(['gamma', 'beta']);
      expect(tight.text.length).toBeLessThanOrEqual(90);
      expect(tight.text).toContain('**alpha**');
      expect(catalog.renderIndexMarkdown({ budget: 5 })).toEqual({
        text: '',
        truncated: { shortened: 0, dropped: ['gamma', 'beta', 'alpha'] },
      });
    });
  });

  describe('renderIndexXml', () => {
    it('should escape XML and give each location', async () => {
      const file = await writeSkill(bundled.dir, 'xml', 'xml', '"Use <tags> & quotes"');
      await catalog.reload();
      expect(catalog.renderIndexXml().text).toBe(
        '<available_skills>\n  <skill>\n    <name>xml</name>\n' +
          '    <description>Use &lt;tags&gt; &amp; quotes</description>\n' +
          `    <location>${file}</location>\n  </skill>\n</available_skills>\n`,
      );
    });
  });

  describe('getBody', () => {
    it('should return the body below the frontmatter with metadata', async () => {
      await writeSkill(bundled.dir, 'alpha', 'alpha', 'Desc.', '# Alpha\n---\nafter a rule\n');
      await catalog.reload();
      expect(catalog.getBody('alpha')).toMatchObject({
        name: 'alpha',
        body: '# Alpha\n---\nafter a rule\n',
        body_line: 5,
        source: 'bundled',
      });
    });

    it('should answer an unknown name with NOT_FOUND listing close names', async () => {
      for (const n of ['remember', 'recall', 'distill']) await writeSkill(bundled.dir, n, n);
      await catalog.reload();
      const err = await caught(() => catalog.getBody('remembr'));
      expect(err.code).toBe('NOT_FOUND');
      expect(err.message).toBe('skill "remembr" not found; did you mean remember?');
      expect(err.details).toEqual({ name: 'remembr', suggestions: ['remember'] });
      expect((await caught(() => catalog.getBody('rec'))).details).toEqual({ name: 'rec', suggestions: ['recall'] });
      expect((await caught(() => catalog.getBody('zzzzzz'))).message).toContain('see the available skills index');
    });
  });

  describe('listResources', () => {
    it('should list every file but SKILL.md, with size and text/binary kind', async () => {
      await writeSkill(bundled.dir, 'res', 'res');
      await mkdir(join(bundled.dir, 'res', 'refs'));
      await writeFile(join(bundled.dir, 'res', 'refs', 'guide.md'), 'héllo');
      await writeFile(join(bundled.dir, 'res', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
      await writeFile(join(bundled.dir, 'res', 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      await catalog.reload();
      expect(await catalog.listResources('res')).toEqual({
        name: 'res',
        truncated: false,
        resources: [
          { path: 'latin1.txt', size: 4, kind: 'binary' },
          { path: 'logo.png', size: 6, kind: 'binary' },
          { path: 'refs/guide.md', size: 6, kind: 'text' },
        ],
      });
    });
  });

  describe('readResource', () => {
    beforeEach(async () => {
      await writeSkill(bundled.dir, 'res', 'res');
      await writeFile(join(bundled.dir, 'res', 'notes.txt'), 'plain text');
      await writeFile(join(bundled.dir, 'res', 'blob.bin'), Buffer.from([1, 0, 2, 255]));
      await writeFile(join(tmp, 'secret.txt'), 'do not leak');
      await symlink(join(tmp, 'secret.txt'), join(bundled.dir, 'res', 'escape.txt'));
      await symlink(join(bundled.dir, 'res', 'notes.txt'), join(bundled.dir, 'res', 'alias.txt'));
      await catalog.reload();
    });

    it('should return text as utf8 and binary as base64', async () => {
      expect(await catalog.readResource('res', 'notes.txt')).toEqual({
        name: 'res',
        path: 'notes.txt',
        size: 10,
        encoding: 'utf8',
        content: 'plain text',
      });
      expect(await catalog.readResource('res', 'blob.bin')).toMatchObject({
        encoding: 'base64',
        content: Buffer.from([1, 0, 2, 255]).toString('base64'),
      });
    });

    it('should follow a symlink that stays inside the folder and refuse one that leaves it', async () => {
      expect((await catalog.readResource('res', 'alias.txt')).content).toBe('plain text');
      const err = await caught(() => catalog.readResource('res', 'escape.txt'));
      expect(err.code).toBe('FORBIDDEN');
      expect(JSON.stringify(err.toBody())).not.toContain('do not leak');
      expect((await catalog.listResources('res')).resources.map((r) => r.path)).not.toContain('escape.txt');
    });

    it.each([
      ['../secret.txt', 'must not contain ".."'],
      ['notes.txt/../../secret.txt', 'must not contain ".."'],
      ['..\\secret.txt', 'must not contain ".."'],
      ['/etc/passwd', 'must be relative'],
      ['C:\\x', 'must be relative'],
      ['notes.txt\0.png', 'NUL byte'],
      ['', 'empty'],
    ])('should refuse %j before touching the disk', async (path, why) => {
      const err = await caught(() => catalog.readResource('res', path));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.message).toContain(why);
    });

    it('should answer a missing file or a folder with NOT_FOUND', async () => {
      expect((await caught(() => catalog.readResource('res', 'nope.txt'))).code).toBe('NOT_FOUND');
      await mkdir(join(bundled.dir, 'res', 'sub'));
      expect((await caught(() => catalog.readResource('res', 'sub'))).code).toBe('NOT_FOUND');
    });

    it('should refuse a file over the size cap with PAYLOAD_TOO_LARGE', async () => {
      await writeFile(join(bundled.dir, 'res', 'big.txt'), 'x'.repeat(1025));
      const err = await caught(() => catalog.readResource('res', 'big.txt'));
      expect(err.code).toBe('PAYLOAD_TOO_LARGE');
      expect(err.details).toMatchObject({ size: 1025, limit: 1024 });
    });
  });

  describe('createSkill', () => {
    it('should write a strictly valid SKILL.md whose YAML quoting survives colons and quotes', async () => {
      const description = 'Use when: the user says "deploy" # not a comment';
      const created = await catalog.createSkill({ name: 'deploy-app', description, body: '# Deploy\n' }, project.dir);
      expect(created).toMatchObject({ name: 'deploy-app', description, body: '# Deploy\n', source: 'project' });
      const text = await readFile(join(project.dir, 'deploy-app', 'SKILL.md'), 'utf8');
      expect(text.startsWith('---\nname: deploy-app\ndescription:')).toBe(true);
    });

    it('should refuse invalid input with VALIDATION_FAILED and details, writing nothing', async () => {
      const err = await caught(() =>
        catalog.createSkill({ name: 'Bad_Name', description: 'd', body: '' }, project.dir),
      );
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.details).toEqual({
        problems: [
          expect.objectContaining({ field: 'name', message: 'must be lowercase: "Bad_Name"' }),
          expect.objectContaining({ field: 'name' }),
        ],
      });
      expect(
        (await caught(() => catalog.createSkill({ name: 'x', description: 'd', extra: 1 }, project.dir))).code,
      ).toBe('VALIDATION_FAILED');
      await expect(readFile(join(project.dir, 'Bad_Name', 'SKILL.md'))).rejects.toThrow();
    });

    it('should answer CONFLICT when the name exists in any root or the folder exists', async () => {
      await writeSkill(bundled.dir, 'taken', 'taken');
      await catalog.reload();
      const err = await caught(() => catalog.createSkill({ name: 'taken', description: 'd', body: '' }, project.dir));
      expect(err.code).toBe('CONFLICT');
      await mkdir(join(project.dir, 'half-made'), { recursive: true });
      expect(
        (await caught(() => catalog.createSkill({ name: 'half-made', description: 'd', body: '' }, project.dir))).code,
      ).toBe('CONFLICT');
    });
  });

  it('should keep answering after a skill file vanishes between reloads', async () => {
    const file = await writeSkill(bundled.dir, 'gone', 'gone');
    await catalog.reload();
    await unlink(file);
    expect(catalog.getBody('gone').name).toBe('gone');
    expect((await catalog.reload()).removed).toEqual(['gone']);
  });
});
