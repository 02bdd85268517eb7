import { checkSkillCode } from './skill-code.check.js';

describe(checkSkillCode.name, () => {
  it('should accept TypeScript that Node can strip and that exports execute', () => {
    expect(
      checkSkillCode(
        'export async function execute(args: { a: number }): Promise<unknown> { return { success: true }; }',
      ),
    ).toBeUndefined();
    expect(checkSkillCode('const run = async () => ({ success: true });\nexport { run as execute };')).toBeUndefined();
    expect(checkSkillCode('export const execute = async (args: unknown) => ({ success: true });')).toBeUndefined();
  });

  it('should refuse code that does not parse, with the parser message', () => {
    expect(checkSkillCode('export function execute( {')).toMatch(/^execute\.ts does not parse: /);
  });

  it('should refuse TypeScript that type stripping cannot run (an enum)', () => {
    expect(checkSkillCode('enum Mode { A }\nexport function execute() { return { success: true }; }')).toMatch(
      /enum is not supported/,
    );
  });

  it('should refuse a module without an execute export', () => {
    expect(checkSkillCode('export function run() { return 1; }')).toBe(
      'execute.ts must export a function execute(args, ctx)',
    );
  });
});

describe(`${checkSkillCode.name} (escapes a textual check would miss)`, () => {
  it('should refuse CommonJS with a clear error, even when a comment mentions an execute export', () => {
    const cjs =
      '// export function execute() {}\nmodule.exports.execute = async () => module.constructor.registerHooks({});';
    expect(checkSkillCode(cjs)).toMatch(/must be an ES module.*CommonJS.*not supported/);
  });

  it('should not take an export inside a comment or a string for the real one', () => {
    expect(checkSkillCode('/* export function execute() {} */\nexport const x = "export function execute() {}";')).toBe(
      'execute.ts must export a function execute(args, ctx)',
    );
  });
});
