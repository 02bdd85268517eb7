import { errorSignature, normaliseError } from './error-normaliser.js';

describe(normaliseError.name, () => {
  it.each([
    [
      'POSIX paths, keeping the file name',
      "open '/home/alice/x' at /home/alice/proj/src/app.ts",
      "open '<value>' at <path>/app.ts",
    ],
    ['Windows paths', 'at C:\\Users\\carol\\proj\\src\\app.ts:7:3', 'at <path>/app.ts:<n>:<n>'],
    ['line and column', 'at run (<path>/a.js:120:45)', 'at run (<path>/a.js:<n>:<n>)'],
    ['ISO timestamps', 'failed at 2024-11-02T10:11:12.345Z', 'failed at <time>'],
    ['space-separated timestamps', 'at 2024-11-02 10:11:12 UTC', 'at <time> UTC'],
    ['UUIDs', 'session 550e8400-e29b-41d4-a716-446655440000 gone', 'session <uuid> gone'],
    ['hex numbers and hashes', 'ptr 0xDEADBEEF commit 3f9a8c7d1e', 'ptr <hex> commit <hex>'],
    ['digit-bearing ids', 'request req_8f3kd92jd83k failed', 'request <id> failed'],
    ['quoted values', `reading 'map' of "user" in \`x\``, 'reading \'<value>\' of "<value>" in `<value>`'],
    ['free-standing numbers', 'expected 3 items, got 12.5', 'expected <n> items, got <n>'],
    ['URLs', 'GET https://api.example.com/v1/items?page=2 failed', 'GET <url> failed'],
  ])('should normalise %s', (_what, input, expected) => {
    expect(normaliseError(input)).toBe(expected);
  });

  it.each([['TS2345'], ['E11000'], ['ECONNREFUSED'], ['ERR_MODULE_NOT_FOUND'], ['utf8']])(
    'should keep the code %s',
    (code) => {
      expect(normaliseError(`error ${code}: broken`)).toBe(`error ${code}: broken`);
    },
  );

  it('should collapse blank lines and runs of spaces', () => {
    expect(normaliseError('a   b\r\n\r\n   c\t\td  ')).toBe('a b\nc d');
  });

  it('should give the same error from two machines the same text', () => {
    const alice =
      "Error: Cannot find module '/home/alice/work/alfred/dist/libs/bus/index.js' imported from " +
      '/home/alice/work/alfred/dist/main.js\n' +
      '    at finalizeResolution (node:internal/modules/esm/resolve:275:11)\n    at 2025-01-03T08:00:00Z';
    const bob =
      "Error: Cannot find module 'C:\\src\\alfred\\dist\\libs\\bus\\index.js' imported from " +
      'C:\\src\\alfred\\dist\\main.js\n' +
      '    at finalizeResolution (node:internal/modules/esm/resolve:281:9)\n    at 2026-07-30T21:14:59.120+02:00';
    expect(normaliseError(alice)).toBe(normaliseError(bob));
  });
});

describe(errorSignature.name, () => {
  it('should join the message, the tool and at most five normalised stack frames', () => {
    const stack = [
      'TypeError: x',
      ...Array.from({ length: 8 }, (_, i) => `    at f${i} (/srv/app/src/m${i}.ts:${i + 10}:2)`),
    ].join('\n');
    const signature = errorSignature({ error_message: 'TypeError: x is 42', tool: 'bash', stack });
    expect(signature.split('\n')).toEqual([
      'TypeError: x is <n>',
      'tool: bash',
      'at f0 (<path>/m0.ts:<n>:<n>)',
      'at f1 (<path>/m1.ts:<n>:<n>)',
      'at f2 (<path>/m2.ts:<n>:<n>)',
      'at f3 (<path>/m3.ts:<n>:<n>)',
      'at f4 (<path>/m4.ts:<n>:<n>)',
    ]);
  });
});
