import { parseSkillFile, quoteBareColonValues } from './frontmatter.parser.js';

const FILE = '/skills/demo/SKILL.md';
const errors = (r: ReturnType<typeof parseSkillFile>) => r.problems.filter((p) => p.severity === 'error');

describe(parseSkillFile.name, () => {
  describe('delimiters', () => {
    it('should split frontmatter and body and report where the body starts', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: Does things\n---\n# Demo\nText\n', FILE);
      expect(r.frontmatter).toEqual({ name: 'demo', description: 'Does things' });
      expect(r.body).toBe('# Demo\nText\n');
      expect(r.bodyLine).toBe(5);
      expect(r.problems).toEqual([]);
    });

    it('should keep a later --- in the body as body (markdown rule or table), not a delimiter', () => {
      const text = '---\nname: demo\ndescription: d\n---\nIntro\n\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n---\nEnd\n';
      const r = parseSkillFile(text, FILE);
      expect(r.frontmatter).toEqual({ name: 'demo', description: 'd' });
      expect(r.body).toBe('Intro\n\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n---\nEnd\n');
    });

    it('should accept CRLF line endings and a BOM', () => {
      const r = parseSkillFile('\uFEFF---\r\nname: demo\r\ndescription: "a: b"\r\n---\r\nBody\r\n', FILE);
      expect(r.frontmatter).toEqual({ name: 'demo', description: 'a: b' });
      expect(r.body).toBe('Body\n');
      expect(r.problems).toEqual([]);
    });

    it('should report unterminated frontmatter without throwing', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: d\n# no closing line\n', FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r)[0]).toMatchObject({ message: expect.stringContaining('not terminated'), line: 1, file: FILE });
    });

    it('should report an empty file', () => {
      const r = parseSkillFile('', FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r)[0].message).toBe('file is empty');
    });

    it('should require the opening --- on the first line', () => {
      const r = parseSkillFile('\n---\nname: demo\n---\n', FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r)[0].message).toContain('first line must be ---');
    });

    it('should report YAML that is not a mapping', () => {
      const r = parseSkillFile('---\n- a\n- b\n---\nBody\n', FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r)[0].message).toBe('frontmatter must be a YAML mapping, found a list');
    });

    it('should report empty frontmatter', () => {
      const r = parseSkillFile('---\n---\nBody\n', FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r)[0].message).toBe('frontmatter is empty');
    });
  });

  describe('YAML values', () => {
    it('should read block scalars |- and > exactly', () => {
      const text =
        '---\nname: demo\ndescription: |-\n  Line one\n  Line two\ncompatibility: >\n  folded\n  text\n---\n';
      const r = parseSkillFile(text, FILE);
      expect(r.frontmatter).toEqual({
        name: 'demo',
        description: 'Line one\nLine two',
        compatibility: 'folded text\n',
      });
    });

    it('should read quoted strings with colons and escapes', () => {
      const text =
        '---\nname: demo\ndescription: "Use when: the user asks \\"why\\"\\tnow \\u00e9"\nlicense: \'It\'\'s ' +
        "MIT: see LICENSE'\n---\n";
      const r = parseSkillFile(text, FILE);
      expect(r.frontmatter).toEqual({
        name: 'demo',
        description: 'Use when: the user asks "why"\tnow é',
        license: "It's MIT: see LICENSE",
      });
    });

    it('should fold a multi-line plain scalar into one line', () => {
      const r = parseSkillFile(
        '---\nname: demo\ndescription: Use this when\n  the user wants\n  many lines\n---\n',
        FILE,
      );
      expect(r.frontmatter?.description).toBe('Use this when the user wants many lines');
    });

    it('should read a metadata map and a flow list, and know which keys are flow style', () => {
      const text =
        '---\nname: demo\ndescription: d\nmetadata:\n  author: me\n  version: "1.0"\nallowed-tools: [Read, ' +
        'Bash]\n---\n';
      const r = parseSkillFile(text, FILE);
      expect(r.frontmatter).toMatchObject({
        metadata: { author: 'me', version: '1.0' },
        'allowed-tools': ['Read', 'Bash'],
      });
      expect(r.flowKeys).toEqual(['allowed-tools']);
      expect(r.keyLines).toEqual({ name: 2, description: 3, metadata: 4, 'allowed-tools': 7 });
    });

    it('should list metadata keys that are not strings', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: d\nmetadata:\n  1: one\n  ok: two\n---\n', FILE);
      expect(r.nonStringMetadataKeys).toEqual(['1']);
    });

    it('should report a duplicate key with its file line and keep the last value', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: first\ndescription: second\n---\n', FILE);
      expect(errors(r)).toEqual([
        {
          severity: 'error',
          field: 'frontmatter',
          message: 'duplicate key: description',
          line: 4,
          column: 1,
          file: FILE,
        },
      ]);
      expect(r.frontmatter?.description).toBe('second');
    });

    it('should report a YAML syntax error at the line and column of the file', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: "unclosed\n---\nBody\n', FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r)[0]).toMatchObject({ line: 3, file: FILE, message: expect.stringMatching(/^YAML: /) });
    });

    it('should recover an unquoted value with a colon, as the client guide suggests, and say so', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: Use when: the user asks about PDFs\n---\n', FILE);
      expect(r.recovered).toBe(true);
      expect(r.frontmatter).toEqual({ name: 'demo', description: 'Use when: the user asks about PDFs' });
      expect(errors(r)[0]).toMatchObject({ line: 3, message: expect.stringContaining('Nested mappings') });
    });

    it('should report an unresolved tag as a warning', () => {
      const r = parseSkillFile('---\nname: demo\ndescription: !custom d\n---\n', FILE);
      expect(r.problems).toEqual([
        expect.objectContaining({ severity: 'warning', line: 3, message: 'YAML: Unresolved tag: !custom' }),
      ]);
    });

    it('should refuse alias bombs instead of expanding them', () => {
      const bomb = [
        'a: &a [x, x, x, x, x, x, x, x, x, x]',
        ...Array.from({ length: 8 }, (_, i) => {
          const prev = i === 0 ? 'a' : `l${i - 1}`;
          return (
            `l${i}: &l${i} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, ` +
            `*${prev}, *${prev}, *${prev}]`
          );
        }),
      ].join('\n');
      const r = parseSkillFile(`---\nname: demo\ndescription: d\n${bomb}\n---\n`, FILE);
      expect(r.frontmatter).toBeNull();
      expect(errors(r).length).toBeGreaterThan(0);
    });
  });
});

describe(quoteBareColonValues.name, () => {
  it('should quote only plain top-level values that contain ": "', () => {
    const yaml = 'name: demo\ndescription: Use when: asked\nother: "already: quoted"\nlist: [a: b]';
    expect(quoteBareColonValues(yaml)).toBe(
      'name: demo\ndescription: "Use when: asked"\nother: "already: quoted"\nlist: [a: b]',
    );
  });
});
