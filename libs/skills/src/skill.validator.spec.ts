import { parseSkillFile } from './frontmatter.parser.js';
import { validateSkill, ValidationMode, type ValidateOptions } from './skill.validator.js';

const FILE = '/skills/demo/SKILL.md';

function check(frontmatter: string, options: Partial<ValidateOptions> = {}, body = 'Body\n') {
  const parsed = parseSkillFile(`---\n${frontmatter}\n---\n${body}`, FILE);
  return validateSkill(parsed, { file: FILE, expectedName: 'demo', mode: ValidationMode.Strict, ...options });
}
const strictErrors = (fm: string, opts?: Partial<ValidateOptions>) =>
  check(fm, opts)
    .problems.filter((p) => p.severity === 'error')
    .map((p) => `${p.field}: ${p.message}`);
const lenient = { mode: ValidationMode.Lenient } as const;

describe(validateSkill.name, () => {
  it('should accept a skill that follows every rule, with its optional fields', () => {
    const r = check(
      'name: demo\ndescription: Does demos.\nlicense: MIT\ncompatibility: Needs curl\nmetadata:\n  author: ' +
        'me\nallowed-tools: Bash(curl:*) Read',
    );
    expect(r).toEqual({
      name: 'demo',
      description: 'Does demos.',
      fields: {
        license: 'MIT',
        compatibility: 'Needs curl',
        metadata: { author: 'me' },
        allowedTools: ['Bash(curl:*)', 'Read'],
      },
      problems: [],
      valid: true,
    });
  });

  describe('name', () => {
    it.each([
      ['Demo', 'must be lowercase'],
      ['de_mo', 'may contain only lowercase letters, digits and hyphens'],
      ['de mo', 'may contain only lowercase letters, digits and hyphens'],
      ['-demo', 'must not start or end with a hyphen'],
      ['demo-', 'must not start or end with a hyphen'],
      ['de--mo', 'must not contain consecutive hyphens'],
    ])('should reject %j: %s', (name, rule) => {
      const errs = strictErrors(`name: "${name}"\ndescription: d`, { expectedName: name });
      expect(errs).toEqual([`name: ${rule}: "${name}"`]);
    });

    it('should accept exactly 64 characters and reject 65', () => {
      const ok = 'a'.repeat(64);
      expect(strictErrors(`name: ${ok}\ndescription: d`, { expectedName: ok })).toEqual([]);
      const long = 'a'.repeat(65);
      expect(strictErrors(`name: ${long}\ndescription: d`, { expectedName: long })).toEqual([
        `name: must be at most 64 characters (is 65): "${long}"`,
      ]);
    });

    it('should require the name to equal the folder name', () => {
      expect(strictErrors('name: other\ndescription: d')).toEqual([
        'name: must equal its folder name "demo" (is "other")',
      ]);
    });

    it('should require a name, and a string one', () => {
      expect(strictErrors('description: d')).toEqual(['name: is required']);
      expect(strictErrors('name: 42\ndescription: d')).toEqual(['name: must be a string, found a number']);
      expect(strictErrors('name: ""\ndescription: d')).toEqual(['name: must not be empty']);
    });

    it('should load a name mismatch leniently with a warning', () => {
      const r = check('name: other\ndescription: d', lenient);
      expect(r.name).toBe('other');
      expect(r.problems).toEqual([expect.objectContaining({ severity: 'warning', field: 'name', line: 1 + 1 })]);
    });

    it('should fall back to the folder name when the name is missing (lenient)', () => {
      const r = check('description: d', lenient);
      expect(r.name).toBe('demo');
      expect(r.skipReason).toBeUndefined();
      expect(r.problems.map((p) => p.message)).toContain('name is missing; loaded under its folder name "demo"');
    });

    it('should skip a nameless skill whose folder name is not valid either', () => {
      const r = check('description: d', { ...lenient, expectedName: 'Bad Folder' });
      expect(r.name).toBeNull();
      expect(r.skipReason).toBe('name is missing, and the folder name "Bad Folder" is not a valid skill name');
    });

    it('should fall back when a name cannot serve as a key (path separator)', () => {
      const r = check('name: a/b\ndescription: d', lenient);
      expect(r.name).toBe('demo');
    });
  });

  describe('description', () => {
    it('should require a non-blank description of at most 1024 characters', () => {
      expect(strictErrors('name: demo')).toEqual(['description: is required']);
      expect(strictErrors('name: demo\ndescription: "   "')).toEqual(['description: must not be empty']);
      expect(strictErrors(`name: demo\ndescription: ${'x'.repeat(1024)}`)).toEqual([]);
      expect(strictErrors(`name: demo\ndescription: ${'x'.repeat(1025)}`)).toEqual([
        'description: must be at most 1024 characters (is 1025)',
      ]);
    });

    it('should skip a skill without a usable description in lenient mode, saying why', () => {
      expect(check('name: demo', lenient).skipReason).toBe('description is missing');
      expect(check('name: demo\ndescription: ""', lenient).skipReason).toBe('description is empty');
      expect(check('name: demo\ndescription: [a]', lenient).skipReason).toBe('description is a list, not a string');
    });

    it('should load an overlong description leniently with a warning', () => {
      const r = check(`name: demo\ndescription: ${'x'.repeat(1100)}`, lenient);
      expect(r.description).toHaveLength(1100);
      expect(r.problems).toEqual([expect.objectContaining({ severity: 'warning', field: 'description', line: 3 })]);
    });
  });

  describe('optional fields', () => {
    it('should limit compatibility to 1-500 characters', () => {
      expect(strictErrors(`name: demo\ndescription: d\ncompatibility: ${'c'.repeat(500)}`)).toEqual([]);
      expect(strictErrors(`name: demo\ndescription: d\ncompatibility: ${'c'.repeat(501)}`)).toEqual([
        'compatibility: must be at most 500 characters (is 501)',
      ]);
      expect(strictErrors('name: demo\ndescription: d\ncompatibility: ""')).toEqual([
        'compatibility: must not be empty when present',
      ]);
    });

    it('should reject keys the spec does not define, each with its line', () => {
      const r = check('name: demo\ndescription: d\nversion: 1.0\ntags: [a]');
      expect(r.problems.map((p) => [p.field, p.line, p.severity])).toEqual([
        ['version', 4, 'error'],
        ['tags', 5, 'error'],
      ]);
      expect(r.problems[0].message).toContain('unknown frontmatter key "version"');
    });

    it('should require metadata to be a mapping with string keys, and warn about non-string values', () => {
      expect(strictErrors('name: demo\ndescription: d\nmetadata: [a, b]')).toEqual([
        'metadata: must be a mapping of string keys to values, found a list',
      ]);
      expect(strictErrors('name: demo\ndescription: d\nmetadata:\n  1: x')).toEqual([
        'metadata: key 1 must be a string',
      ]);
      const r = check('name: demo\ndescription: d\nmetadata:\n  count: 3');
      expect(r.valid).toBe(true);
      expect(r.fields.metadata).toEqual({ count: 3 });
      expect(r.problems[0]).toMatchObject({
        severity: 'warning',
        message: expect.stringContaining('"count" is a number'),
      });
    });

    it('should take allowed-tools as a space-delimited string and report a list as a spec violation', () => {
      const list = check('name: demo\ndescription: d\nallowed-tools: [Read, Bash]');
      expect(list.fields.allowedTools).toEqual(['Read', 'Bash']);
      expect(list.problems[0]).toMatchObject({ severity: 'error', field: 'allowed-tools' });
      expect(check('name: demo\ndescription: d\nallowed-tools: [Read]', lenient).problems[0].severity).toBe('warning');
      expect(strictErrors('name: demo\ndescription: d\nallowed-tools: 3')).toEqual([
        'allowed-tools: must be a space-delimited string, found a number',
      ]);
    });

    it('should require license to be a string', () => {
      expect(strictErrors('name: demo\ndescription: d\nlicense: [MIT]')).toEqual([
        'license: must be a string, found a list',
      ]);
    });
  });

  describe('file-level problems', () => {
    it('should skip a skill whose YAML cannot be read at all, giving the line', () => {
      const parsed = parseSkillFile('---\nname: demo\ndescription: "open\n---\n', FILE);
      const r = validateSkill(parsed, { file: FILE, expectedName: 'demo', mode: ValidationMode.Lenient });
      expect(r.skipReason).toMatch(/^YAML: .*\(line 3\)$/);
    });

    it('should load a recovered bare-colon description leniently, and fail it strictly', () => {
      const parsed = parseSkillFile('---\nname: demo\ndescription: Use when: asked\n---\nBody\n', FILE);
      const loose = validateSkill(parsed, { file: FILE, expectedName: 'demo', mode: ValidationMode.Lenient });
      expect(loose).toMatchObject({ name: 'demo', description: 'Use when: asked', valid: true });
      const strict = validateSkill(parsed, { file: FILE, expectedName: 'demo', mode: ValidationMode.Strict });
      expect(strict.valid).toBe(false);
    });

    it('should warn about an empty body and about files over 500 lines', () => {
      expect(check('name: demo\ndescription: d', {}, '').problems).toEqual([
        expect.objectContaining({ severity: 'warning', field: 'body', line: 5 }),
      ]);
      const long = check('name: demo\ndescription: d', {}, 'x\n'.repeat(497));
      expect(long.problems).toEqual([
        expect.objectContaining({ severity: 'warning', message: expect.stringContaining('501 lines') }),
      ]);
      expect(check('name: demo\ndescription: d', {}, 'x\n'.repeat(496)).problems).toEqual([]);
    });
  });
});
