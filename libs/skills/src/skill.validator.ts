import {
  SKILL_ALLOWED_KEYS,
  SKILL_COMPATIBILITY_MAX,
  SKILL_DESCRIPTION_MAX,
  SKILL_NAME_MAX,
  SKILL_NAME_PATTERN,
  type SkillProblem,
} from '#contracts';
import type { ParsedSkillFile } from './frontmatter.parser.js';

/**
 * strict: every spec violation is an error (the CLI). lenient: load what is usable, warn about the rest (the registry).
 */
export const ValidationMode = { Strict: 'strict', Lenient: 'lenient' } as const;
export type ValidationMode = (typeof ValidationMode)[keyof typeof ValidationMode];

/** The spec's advice for SKILL.md length; longer files load but are warned about. */
export const SKILL_RECOMMENDED_MAX_LINES = 500;

export interface ValidateOptions {
  file: string;
  /** The folder name (or, for a direct `*.md` in a root, the file stem) the name must equal. */
  expectedName: string;
  mode: ValidationMode;
}

/** Optional frontmatter fields as the registry keeps them. */
export interface SkillFields {
  license?: string;
  compatibility?: string;
  metadata?: Record<string, unknown>;
  allowedTools?: string[];
}

export interface SkillValidation {
  /** The name to load the skill under (lenient mode may fall back to the folder name); null when skipped. */
  name: string | null;
  description: string | null;
  fields: SkillFields;
  problems: SkillProblem[];
  /** Lenient mode: why the skill cannot be loaded at all. */
  skipReason?: string;
  /** No problem of severity error. */
  valid: boolean;
}

class ProblemSink {
  readonly problems: SkillProblem[] = [];
  constructor(
    private readonly parsed: ParsedSkillFile,
    private readonly options: ValidateOptions,
  ) {}

  /** A violation of the specification: an error when strict, a warning when lenient. */
  violation(field: string, message: string): void {
    this.add(this.options.mode === ValidationMode.Strict ? 'error' : 'warning', field, message);
  }

  warning(field: string, message: string, line?: number): void {
    this.add('warning', field, message, line);
  }

  private add(severity: SkillProblem['severity'], field: string, message: string, at?: number): void {
    const line = at ?? this.parsed.keyLines[field] ?? 1;
    this.problems.push({ severity, field, message, line, file: this.options.file });
  }
}

/** Applies the Agent Skills rules to a parsed SKILL.md; never throws. */
export function validateSkill(parsed: ParsedSkillFile, options: ValidateOptions): SkillValidation {
  const strict = options.mode === ValidationMode.Strict;
  const parseProblems = parsed.problems.map((p) =>
    strict || p.severity === 'warning' ? p : { ...p, severity: 'warning' as const },
  );
  const fm = parsed.frontmatter;
  if (!fm) {
    const first = parsed.problems.find((p) => p.severity === 'error') ?? parsed.problems[0];
    const reason = first ? `${first.message}${first.line ? ` (line ${first.line})` : ''}` : 'no usable frontmatter';
    const problems = parsed.problems.map((p) => ({ ...p, severity: 'error' as const }));
    return { name: null, description: null, fields: {}, problems, skipReason: reason, valid: false };
  }
  const sink = new ProblemSink(parsed, options);
  if (parsed.recovered)
    sink.warning('frontmatter', 'invalid YAML was read by quoting values that contain ": "; quote them in the file');
  const name = checkName(fm.name, options, sink);
  const description = checkDescription(fm.description, sink);
  const fields = checkOptionalFields(fm, parsed, sink);
  checkBody(parsed, sink);
  const problems = [...parseProblems, ...sink.problems];
  const valid = !problems.some((p) => p.severity === 'error');
  if (strict) return { name: name.value, description: description.value, fields, problems, valid };
  const skipReason = name.skip ?? description.skip;
  if (skipReason) return { name: null, description: null, fields, problems, skipReason, valid };
  return { name: name.value, description: description.value, fields, problems, valid };
}

interface Checked {
  value: string | null;
  skip?: string;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
}

function nameRuleBreaks(name: string): string[] {
  const breaks: string[] = [];
  if (name.length > SKILL_NAME_MAX) breaks.push(`must be at most ${SKILL_NAME_MAX} characters (is ${name.length})`);
  if (SKILL_NAME_PATTERN.test(name)) return breaks;
  if (/[A-Z]/.test(name)) breaks.push('must be lowercase');
  if (/[^A-Za-z0-9-]/.test(name)) breaks.push('may contain only lowercase letters, digits and hyphens');
  if (/^-|-$/.test(name)) breaks.push('must not start or end with a hyphen');
  if (name.includes('--')) breaks.push('must not contain consecutive hyphens');
  return breaks;
}

/** A name the registry can key on: not blank, no path separators, no control characters. */
function usableName(name: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: it refuses control characters
  return name.trim() === name && name.length > 0 && name.length <= 255 && !/[/\\\u0000-\u001f\u007f]/.test(name);
}

function checkName(raw: unknown, options: ValidateOptions, sink: ProblemSink): Checked {
  const fallback = (why: string): Checked => {
    if (SKILL_NAME_PATTERN.test(options.expectedName) && options.expectedName.length <= SKILL_NAME_MAX) {
      sink.warning('name', `${why}; loaded under its folder name "${options.expectedName}"`);
      return { value: options.expectedName };
    }
    return { value: null, skip: `${why}, and the folder name "${options.expectedName}" is not a valid skill name` };
  };
  if (raw === undefined || raw === null) {
    sink.violation('name', 'is required');
    return fallback('name is missing');
  }
  if (typeof raw !== 'string') {
    sink.violation('name', `must be a string, found ${describeType(raw)}`);
    return fallback(`name is ${describeType(raw)}, not a string`);
  }
  if (raw.trim() === '') {
    sink.violation('name', 'must not be empty');
    return fallback('name is empty');
  }
  for (const rule of nameRuleBreaks(raw)) sink.violation('name', `${rule}: "${raw}"`);
  if (raw !== options.expectedName)
    sink.violation('name', `must equal its folder name "${options.expectedName}" (is "${raw}")`);
  return usableName(raw) ? { value: raw } : fallback(`name "${raw}" cannot be used as a key`);
}

function checkDescription(raw: unknown, sink: ProblemSink): Checked {
  if (raw === undefined || raw === null) {
    sink.violation('description', 'is required');
    return { value: null, skip: 'description is missing' };
  }
  let text: string;
  if (typeof raw === 'string') text = raw;
  else if (typeof raw === 'number' || typeof raw === 'boolean') {
    sink.violation('description', `must be a string, found ${describeType(raw)}`);
    text = String(raw);
  } else {
    sink.violation('description', `must be a string, found ${describeType(raw)}`);
    return { value: null, skip: `description is ${describeType(raw)}, not a string` };
  }
  if (text.trim() === '') {
    sink.violation('description', 'must not be empty');
    return { value: null, skip: 'description is empty' };
  }
  if (text.length > SKILL_DESCRIPTION_MAX) {
    sink.violation('description', `must be at most ${SKILL_DESCRIPTION_MAX} characters (is ${text.length})`);
  }
  return { value: text };
}

function checkOptionalFields(fm: Record<string, unknown>, parsed: ParsedSkillFile, sink: ProblemSink): SkillFields {
  const fields: SkillFields = {};
  for (const key of Object.keys(fm)) {
    if (!(SKILL_ALLOWED_KEYS as readonly string[]).includes(key)) {
      sink.violation(
        key,
        `unknown frontmatter key "${key}"; allowed: ${SKILL_ALLOWED_KEYS.join(', ')} (put extra data under metadata)`,
      );
    }
  }
  if (fm.license !== undefined) {
    if (typeof fm.license === 'string') fields.license = fm.license;
    else sink.violation('license', `must be a string, found ${describeType(fm.license)}`);
  }
  if (fm.compatibility !== undefined) fields.compatibility = checkCompatibility(fm.compatibility, sink);
  if (fm.metadata !== undefined) fields.metadata = checkMetadata(fm.metadata, parsed, sink);
  if (fm['allowed-tools'] !== undefined) fields.allowedTools = checkAllowedTools(fm['allowed-tools'], sink);
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as SkillFields;
}

function checkCompatibility(raw: unknown, sink: ProblemSink): string | undefined {
  if (typeof raw !== 'string') {
    sink.violation('compatibility', `must be a string, found ${describeType(raw)}`);
    return undefined;
  }
  if (raw.trim() === '') sink.violation('compatibility', 'must not be empty when present');
  if (raw.length > SKILL_COMPATIBILITY_MAX) {
    sink.violation('compatibility', `must be at most ${SKILL_COMPATIBILITY_MAX} characters (is ${raw.length})`);
  }
  return raw;
}

function checkMetadata(raw: unknown, parsed: ParsedSkillFile, sink: ProblemSink): Record<string, unknown> | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    sink.violation('metadata', `must be a mapping of string keys to values, found ${describeType(raw)}`);
    return undefined;
  }
  for (const key of parsed.nonStringMetadataKeys) sink.violation('metadata', `key ${key} must be a string`);
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string')
      sink.warning('metadata', `value of "${key}" is ${describeType(value)}; the spec expects strings (kept as given)`);
  }
  return raw as Record<string, unknown>;
}

function checkAllowedTools(raw: unknown, sink: ProblemSink): string[] | undefined {
  if (typeof raw === 'string') return raw.split(/\s+/).filter(Boolean);
  if (Array.isArray(raw) && raw.every((t) => typeof t === 'string')) {
    sink.violation('allowed-tools', 'must be a space-delimited string (e.g. "Bash(git:*) Read"), found a list');
    return raw as string[];
  }
  sink.violation('allowed-tools', `must be a space-delimited string, found ${describeType(raw)}`);
  return undefined;
}

function checkBody(parsed: ParsedSkillFile, sink: ProblemSink): void {
  const bodyLines = countLines(parsed.body);
  const fileLines = parsed.bodyLine - 1 + bodyLines;
  if (parsed.body.trim() === '')
    sink.warning('body', 'is empty: nothing below the frontmatter tells the agent what to do', parsed.bodyLine);
  if (fileLines > SKILL_RECOMMENDED_MAX_LINES) {
    sink.warning(
      'body',
      `SKILL.md has ${fileLines} lines; the spec recommends under ${SKILL_RECOMMENDED_MAX_LINES} (move ` +
        `detail to resource files)`,
      parsed.bodyLine,
    );
  }
}

/** Lines of text, not counting the empty string after a final newline. */
export function countLines(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}
