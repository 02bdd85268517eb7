import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SkillProblem, SkillValidationReport } from '#contracts';
import { parseSkillFile } from './frontmatter.parser.js';
import { settle } from './path-containment.js';
import { findSkillCandidates, type SkillCandidate } from './skill-discovery.js';
import { validateSkill, ValidationMode } from './skill.validator.js';

/** Where a command writes; the CLI passes process streams, tests pass collectors. */
export interface CommandIo {
  cwd: string;
  out: (line: string) => void;
  err: (line: string) => void;
}

export const ExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;

const USAGE = 'usage: alfred skills validate <dir|SKILL.md>... [--json]';

/** Strictly validates one skill file; never throws. */
export async function validateSkillFile(candidate: SkillCandidate): Promise<SkillValidationReport> {
  const read = await settle(readFile(candidate.file, 'utf8'));
  if (!read.ok) {
    const problem: SkillProblem = {
      severity: 'error',
      field: 'file',
      message: `cannot read: ${read.error.message}`,
      file: candidate.file,
    };
    return { skill: null, path: candidate.file, valid: false, errors: [problem], warnings: [] };
  }
  return validateSkillText(read.value, candidate.file, candidate.expectedName);
}

/** Strictly validates a SKILL.md's text (`file` names it in the problems; `expectedName` is its folder's name). */
export function validateSkillText(text: string, file: string, expectedName: string): SkillValidationReport {
  const parsed = parseSkillFile(text, file);
  const result = validateSkill(parsed, { file, expectedName, mode: ValidationMode.Strict });
  const fmName = parsed.frontmatter?.name;
  return {
    skill: typeof fmName === 'string' ? fmName : null,
    path: file,
    valid: result.valid,
    errors: result.problems.filter((p) => p.severity === 'error'),
    warnings: result.problems.filter((p) => p.severity === 'warning'),
  };
}

/** A target may be a SKILL.md (or other .md) file, a skill folder, or a root holding many skills. */
export async function candidatesFor(
  target: string,
): Promise<{ candidates: SkillCandidate[]; problems: SkillProblem[] }> {
  const info = await stat(target);
  if (info.isFile()) {
    const isSkillMd = basename(target) === 'SKILL.md';
    const expectedName = isSkillMd ? basename(dirname(target)) : basename(target).replace(/\.md$/, '');
    return {
      candidates: [{ file: target, dir: dirname(target), expectedName, kind: isSkillMd ? 'folder' : 'file' }],
      problems: [],
    };
  }
  if (existsSync(resolve(target, 'SKILL.md'))) {
    const file = resolve(target, 'SKILL.md');
    return {
      candidates: [{ file, dir: target, expectedName: basename(resolve(target)), kind: 'folder' }],
      problems: [],
    };
  }
  const found = await findSkillCandidates(target);
  return { candidates: found.candidates, problems: found.warnings };
}

function formatProblem(p: SkillProblem, cwd: string): string {
  const where = `${relative(cwd, p.file) || p.file}${p.line ? `:${p.line}` : ''}${p.column ? `:${p.column}` : ''}`;
  return `${where}: ${p.severity} ${p.field}: ${p.message}`;
}

function parseCommandLine(args: string[], io: CommandIo) {
  try {
    return parseArgs({ args, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (err) {
    io.err((err as Error).message);
    io.err(USAGE);
    return undefined;
  }
}

/** `alfred skills validate <dir...> [--json]`: exit 1 when any skill has an error, 2 on usage errors. */
export async function runValidateCommand(args: string[], io: CommandIo): Promise<number> {
  const parsed = parseCommandLine(args, io);
  if (!parsed) return ExitCode.Usage;
  const json = parsed.values.json === true;
  const targets = parsed.positionals;
  if (targets.length === 0) {
    io.err('no directory given');
    io.err(USAGE);
    return ExitCode.Usage;
  }
  const reports: SkillValidationReport[] = [];
  for (const target of targets) {
    const abs = resolve(io.cwd, target);
    const settled = await settle(candidatesFor(abs));
    if (!settled.ok) {
      io.err(`${target}: ${settled.error.code === 'ENOENT' ? 'no such file or directory' : settled.error.message}`);
      return ExitCode.Usage;
    }
    const found = settled.value;
    if (found.candidates.length === 0) {
      const problem: SkillProblem = { severity: 'error', field: 'discovery', message: 'no SKILL.md found', file: abs };
      reports.push({ skill: null, path: abs, valid: false, errors: [problem], warnings: found.problems });
      continue;
    }
    for (const candidate of found.candidates) reports.push(await validateSkillFile(candidate));
  }
  for (const report of reports) {
    if (json) io.out(JSON.stringify(report));
    else for (const p of [...report.errors, ...report.warnings]) io.out(formatProblem(p, io.cwd));
  }
  const failed = reports.filter((r) => !r.valid).length;
  if (!json) {
    const warnings = reports.reduce((n, r) => n + r.warnings.length, 0);
    io.out(
      `${reports.length} skill(s) checked: ${reports.length - failed} valid, ${failed} invalid, ${warnings} warning(s)`,
    );
  }
  return failed > 0 ? ExitCode.Failed : ExitCode.Ok;
}
