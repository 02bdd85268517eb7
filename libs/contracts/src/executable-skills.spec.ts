import {
  buildArgsSchema,
  manifestToJsonSchema,
  SkillManifest,
  skillToolName,
  type SkillManifestInput,
} from './executable-skills.js';

const base: SkillManifestInput = {
  id: 'generate-image',
  name: 'Images',
  description: 'Generates images',
  version: '1.0.0',
  createdBy: 'devo',
};

describe('SkillManifest', () => {
  it('should apply defaults for limits and permissions', () => {
    const manifest = SkillManifest.parse(base);
    expect(manifest).toMatchObject({
      timeoutMs: 30_000,
      memoryMb: 128,
      parameters: {},
      tags: [],
      permissions: { net: [], env: [], fs: { read: [], write: [] } },
    });
  });

  it.each<[string, Partial<SkillManifestInput>, RegExp]>([
    ['an invalid id', { id: 'Generate_Image' }, /skill ids are 1-64 lowercase/],
    ['a non-semver version', { version: 'v1' }, /semver/],
    ['a timeout above the maximum', { timeoutMs: 600_000 }, /too big/i],
    ['a memory cap above the maximum', { memoryMb: 4096 }, /too big/i],
    ['a host with a path', { permissions: { net: ['api.example.com/v1'] } }, /hosts are lowercase host names/],
    [
      'a file root outside the named roots',
      { permissions: { fs: { read: ['../etc'] } } },
      /file roots are "self" or "shared\/<name>"/,
    ],
    ['a lowercase env name', { permissions: { env: ['path'] } }, /UPPER_SNAKE_CASE/],
    [
      'a limit for the wrong type',
      { parameters: { n: { type: 'string', minimum: 1 } } },
      /minimum does not apply to type string/,
    ],
    [
      'min above max',
      { parameters: { n: { type: 'integer', minimum: 5, maximum: 1 } } },
      /minimum must not exceed maximum/,
    ],
    [
      'enum values of another type',
      { parameters: { n: { type: 'integer', enum: ['a'] } } },
      /enum values must be of type integer/,
    ],
    [
      'a default violating its own schema',
      { parameters: { size: { type: 'string', enum: ['s', 'm'], default: 'xl' } } },
      /default does not satisfy/,
    ],
    [
      'a nested default violating its schema',
      { parameters: { o: { type: 'array', items: { type: 'integer', maximum: 3, default: 9 } } } },
      /default does not satisfy/,
    ],
    ['unknown fields', { systemPrompt: 'x' } as Partial<SkillManifestInput>, /Unrecognized key/],
  ])('should refuse %s', (_name, patch, message) => {
    const parsed = SkillManifest.safeParse({ ...base, ...patch });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.message).join('\n')).toMatch(message);
  });
});

describe('buildArgsSchema', () => {
  const manifest = SkillManifest.parse({
    ...base,
    parameters: {
      prompt: { type: 'string', required: true, minLength: 1, maxLength: 100 },
      size: { type: 'string', enum: ['512x512', '1024x1024'], default: '1024x1024' },
      count: { type: 'integer', minimum: 1, maximum: 4, default: 1 },
      seeds: { type: 'array', items: { type: 'number' }, maxItems: 2 },
      style: { type: 'object', properties: { vivid: { type: 'boolean', required: true } } },
    },
  });
  const schema = buildArgsSchema(manifest);

  it('should apply defaults and keep given values', () => {
    expect(schema.parse({ prompt: 'a cat' })).toEqual({ prompt: 'a cat', size: '1024x1024', count: 1 });
    expect(schema.parse({ prompt: 'a cat', seeds: [1.5], style: { vivid: true } })).toMatchObject({
      seeds: [1.5],
      style: { vivid: true },
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a missing required field', {}, 'prompt'],
    ['a wrong type', { prompt: 5 }, 'prompt'],
    ['a value outside the enum', { prompt: 'x', size: '2x2' }, 'size'],
    ['a non-integer', { prompt: 'x', count: 1.5 }, 'count'],
    ['a number above maximum', { prompt: 'x', count: 5 }, 'count'],
    ['a string above maxLength', { prompt: 'x'.repeat(101) }, 'prompt'],
    ['too many items', { prompt: 'x', seeds: [1, 2, 3] }, 'seeds'],
    ['a wrong item type', { prompt: 'x', seeds: ['1'] }, 'seeds.0'],
    ['a missing nested required field', { prompt: 'x', style: {} }, 'style.vivid'],
  ])('should refuse %s', (_name, args, field) => {
    const parsed = schema.safeParse(args);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toContain(field);
  });

  it('should refuse unknown arguments', () => {
    expect(schema.safeParse({ prompt: 'x', extra: 1 }).success).toBe(false);
  });

  it('should not share mutable defaults between calls', () => {
    const withList = buildArgsSchema(
      SkillManifest.parse({
        ...base,
        parameters: { tags: { type: 'array', items: { type: 'string' }, default: ['a'] } },
      }),
    );
    const first = withList.parse({}) as { tags: string[] };
    first.tags.push('mutated');
    expect(withList.parse({})).toEqual({ tags: ['a'] });
  });
});

describe('manifestToJsonSchema', () => {
  it('should describe the tool input as a closed JSON Schema object', () => {
    const manifest = SkillManifest.parse({
      ...base,
      parameters: {
        prompt: { type: 'string', required: true, description: 'What to draw' },
        size: { type: 'string', enum: ['s', 'm'], default: 's' },
        style: { type: 'object', properties: { vivid: { type: 'boolean', required: true } } },
        seeds: { type: 'array', items: { type: 'integer', minimum: 0 } },
      },
    });
    expect(manifestToJsonSchema(manifest)).toEqual({
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'What to draw' },
        size: { type: 'string', enum: ['s', 'm'], default: 's' },
        style: {
          type: 'object',
          properties: { vivid: { type: 'boolean' } },
          required: ['vivid'],
          additionalProperties: false,
        },
        seeds: { type: 'array', items: { type: 'integer', minimum: 0 } },
      },
      required: ['prompt'],
      additionalProperties: false,
    });
    expect(skillToolName(manifest.id)).toBe('skill_generate_image');
  });
});
