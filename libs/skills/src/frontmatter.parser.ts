import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { SkillProblem } from '#contracts';

/** The result of splitting and parsing a SKILL.md; `frontmatter` is null when there is none usable. */
export interface ParsedSkillFile {
  frontmatter: Record<string, unknown> | null;
  body: string;
  /** 1-based line of the file where the body starts. */
  bodyLine: number;
  /** 1-based line of each top-level frontmatter key in the file. */
  keyLines: Record<string, number>;
  /** Keys whose values are written in YAML flow style (`[a, b]`, `{a: b}`). */
  flowKeys: string[];
  /** `metadata` keys that are not strings in the YAML (numbers, booleans, null, collections). */
  nonStringMetadataKeys: string[];
  /** True when the YAML was invalid and only parsed after quoting values with bare colons. */
  recovered: boolean;
  problems: SkillProblem[];
}

const FENCE = /^---[ \t]*$/;
const YAML_OPTIONS = { prettyErrors: false, uniqueKeys: true, maxAliasCount: 100 } as const;

function problem(file: string, message: string, line?: number, column?: number): SkillProblem {
  return {
    severity: 'error',
    field: 'frontmatter',
    message,
    file,
    ...(line ? { line } : {}),
    ...(column ? { column } : {}),
  };
}

/** Splits a SKILL.md into frontmatter and body and parses the YAML; never throws. */
export function parseSkillFile(text: string, file: string): ParsedSkillFile {
  const normalised = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, '\n');
  const lines = normalised.split('\n');
  const empty = { keyLines: {}, flowKeys: [], nonStringMetadataKeys: [], recovered: false };
  if (normalised.trim() === '') {
    return { ...empty, frontmatter: null, body: '', bodyLine: 1, problems: [problem(file, 'file is empty', 1)] };
  }
  if (!FENCE.test(lines[0])) {
    const message = 'no frontmatter: the first line must be ---';
    return { ...empty, frontmatter: null, body: normalised, bodyLine: 1, problems: [problem(file, message, 1)] };
  }
  const close = lines.findIndex((line, i) => i > 0 && FENCE.test(line));
  if (close < 0) {
    const message = 'frontmatter is not terminated: no closing --- line';
    return { ...empty, frontmatter: null, body: '', bodyLine: lines.length, problems: [problem(file, message, 1)] };
  }
  const yamlText = lines.slice(1, close).join('\n');
  const body = lines.slice(close + 1).join('\n');
  return { ...parseYaml(yamlText, file), body, bodyLine: close + 2 };
}

type YamlPart = Pick<
  ParsedSkillFile,
  'frontmatter' | 'keyLines' | 'flowKeys' | 'nonStringMetadataKeys' | 'recovered' | 'problems'
>;

function parseYaml(yamlText: string, file: string): YamlPart {
  const first = parseOnce(yamlText, file);
  const fatal = first.problems.some((p) => p.severity === 'error' && !p.message.startsWith('duplicate key'));
  if (!fatal) return first;
  const quoted = quoteBareColonValues(yamlText);
  if (quoted === yamlText) return { ...first, frontmatter: null };
  const retry = parseOnce(quoted, file);
  if (retry.problems.some((p) => p.severity === 'error')) return { ...first, frontmatter: null };
  // Keep the original errors (strict validation reports them) but hand back the recovered values.
  return { ...retry, recovered: true, problems: [...first.problems, ...retry.problems] };
}

function parseOnce(yamlText: string, file: string): YamlPart {
  const counter = new LineCounter();
  const problems: SkillProblem[] = [];
  let doc: Document.Parsed;
  try {
    doc = parseDocument(yamlText, { ...YAML_OPTIONS, lineCounter: counter });
  } catch (err) {
    const problems = [problem(file, `YAML: ${String(err)}`)];
    return { frontmatter: null, keyLines: {}, flowKeys: [], nonStringMetadataKeys: [], recovered: false, problems };
  }
  // The YAML starts on line 2 of the file (line 1 is the opening ---).
  const at = (offset: number) => {
    const { line, col } = counter.linePos(offset);
    return { line: line + 1, col };
  };
  for (const err of doc.errors) {
    const { line, col } = at(err.pos[0]);
    const text =
      err.code === 'DUPLICATE_KEY' ? `duplicate key: ${keyAt(yamlText, err.pos[0])}` : `YAML: ${err.message}`;
    problems.push(problem(file, text, line, col));
  }
  for (const warn of doc.warnings) {
    const { line, col } = at(warn.pos[0]);
    problems.push({ ...problem(file, `YAML: ${warn.message}`, line, col), severity: 'warning' });
  }
  const keys = describeKeys(doc, at);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    problems.push(problem(file, `YAML: ${err instanceof Error ? err.message : String(err)}`));
    return { frontmatter: null, ...keys, recovered: false, problems };
  }
  if (value === null || value === undefined) {
    problems.push(problem(file, 'frontmatter is empty', 2));
    return { frontmatter: null, ...keys, recovered: false, problems };
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push(
      problem(file, `frontmatter must be a YAML mapping, found ${Array.isArray(value) ? 'a list' : typeof value}`, 2),
    );
    return { frontmatter: null, ...keys, recovered: false, problems };
  }
  return { frontmatter: value as Record<string, unknown>, ...keys, recovered: false, problems };
}

function describeKeys(doc: Document.Parsed, at: (offset: number) => { line: number }) {
  const keyLines: Record<string, number> = {};
  const flowKeys: string[] = [];
  const nonStringMetadataKeys: string[] = [];
  if (!isMap(doc.contents)) return { keyLines, flowKeys, nonStringMetadataKeys };
  for (const pair of doc.contents.items) {
    if (!isScalar(pair.key) || !pair.key.range) continue;
    const key = String(pair.key.value);
    keyLines[key] ??= at(pair.key.range[0]).line;
    const value = pair.value as { flow?: boolean } | null;
    if (value && typeof value === 'object' && value.flow === true) flowKeys.push(key);
    if (key === 'metadata' && isMap(pair.value)) {
      for (const item of pair.value.items) {
        if (!isScalar(item.key) || typeof item.key.value !== 'string') nonStringMetadataKeys.push(String(item.key));
      }
    }
  }
  return { keyLines, flowKeys, nonStringMetadataKeys };
}

function keyAt(text: string, offset: number): string {
  const rest = text.slice(offset);
  return rest.slice(0, Math.max(rest.search(/[:\n]/), 0)).trim() || '(unknown)';
}

/**
 * The Agent Skills client guide's fallback for YAML that other clients accept: a top-level
 * `key: value` whose plain value contains `: ` is rewritten as a double-quoted string.
 */
export function quoteBareColonValues(yamlText: string): string {
  return yamlText
    .split('\n')
    .map((line) => {
      const m = /^([A-Za-z0-9_-]+):[ \t]+(.+)$/.exec(line);
      if (!m) return line;
      const value = m[2].trimEnd();
      if (/^["'[{|>&*!#]/.test(value) || !/:\s/.test(value)) return line;
      return `${m[1]}: ${JSON.stringify(value)}`;
    })
    .join('\n');
}
