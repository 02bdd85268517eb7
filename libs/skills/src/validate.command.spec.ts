import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillValidationReport } from '#contracts';
import { writeSkill } from './skill-fixtures.util.js';
import { runValidateCommand, type CommandIo } from './validate.command.js';

function collector(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIo = { cwd, out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

describe(runValidateCommand.name, () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'alfred-validate-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('should exit 0 and print a summary for a valid skill folder', async () => {
    await writeSkill(tmp, 'good', 'good');
    const { io, out } = collector(tmp);
    expect(await runValidateCommand(['good'], io)).toBe(0);
    expect(out).toEqual(['1 skill(s) checked: 1 valid, 0 invalid, 0 warning(s)']);
  });

  it('should report every problem of every skill in a root with file, line and field, and exit 1', async () => {
    await writeSkill(tmp, 'root/good', 'good');
    await writeSkill(tmp, 'root/.system/wrong', 'Wrong_Name');
    await mkdir(join(tmp, 'root', 'extra'));
    await writeFile(
      join(tmp, 'root', 'extra', 'SKILL.md'),
      '---\nname: extra\ndescription: d\nversion: 2\n---\nBody\n',
    );
    const { io, out } = collector(tmp);
    expect(await runValidateCommand(['root'], io)).toBe(1);
    expect(out).toEqual([
      'root/.system/wrong/SKILL.md:2: error name: must be lowercase: "Wrong_Name"',
      'root/.system/wrong/SKILL.md:2: error name: may contain only lowercase letters, digits and hyphens: "Wrong_Name"',
      'root/.system/wrong/SKILL.md:2: error name: must equal its folder name "wrong" (is "Wrong_Name")',
      'root/extra/SKILL.md:4: error version: unknown frontmatter key "version"; allowed: name, description, ' +
        'license, compatibility, metadata, allowed-tools (put extra data under metadata)',
      '3 skill(s) checked: 1 valid, 2 invalid, 0 warning(s)',
    ]);
  });

  it('should print one JSON report per skill per line with --json', async () => {
    await writeSkill(tmp, 'r/a', 'a');
    await writeSkill(tmp, 'r/b', 'b', '""');
    const { io, out } = collector(tmp);
    expect(await runValidateCommand(['r', '--json'], io)).toBe(1);
    const reports = out.map((l) => SkillValidationReport.parse(JSON.parse(l)));
    expect(reports.map((r) => [r.skill, r.valid, r.errors.map((e) => e.field)])).toEqual([
      ['a', true, []],
      ['b', false, ['description']],
    ]);
  });

  it('should validate a single file given directly, including a YAML error with line and column', async () => {
    await mkdir(join(tmp, 'broken'));
    await writeFile(join(tmp, 'broken', 'SKILL.md'), '---\nname: broken\ndescription: "open\n---\n');
    const { io, out } = collector(tmp);
    expect(await runValidateCommand([join(tmp, 'broken', 'SKILL.md')], io)).toBe(1);
    expect(out[0]).toMatch(/^broken\/SKILL\.md:3:\d+: error frontmatter: YAML: /);
  });

  it('should fail on a directory without skills', async () => {
    await mkdir(join(tmp, 'empty'));
    const { io, out } = collector(tmp);
    expect(await runValidateCommand(['empty'], io)).toBe(1);
    expect(out[0]).toBe('empty: error discovery: no SKILL.md found');
  });

  it.each([[[]], [['--nope', 'x']], [['missing-dir']]])('should exit 2 on a usage error: %j', async (args) => {
    const { io, err } = collector(tmp);
    expect(await runValidateCommand(args, io)).toBe(2);
    expect(err.length).toBeGreaterThan(0);
  });
});
