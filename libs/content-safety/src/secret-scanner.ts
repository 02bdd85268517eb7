import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { secretLintProfiler } from '@secretlint/profiler';

// secretlint profiles every scan by default: performance marks per rule, kept in arrays that are never emptied — memory
// that grows with every write scanned, and a quarter of a scan's cost.
secretLintProfiler.setEnabled(false);

/** Where a credential was found: the rule that matched and its position, never the matched text. */
export interface SecretFinding {
  /** The rule's id, e.g. `@secretlint/secretlint-rule-aws` or `alfred/credential-in-url`. */
  readonly rule: string;
  /** What kind of credential the rule saw, e.g. `AWSSecretAccessKey`. */
  readonly kind: string;
  /** Character offsets [start, end) in the scanned text. */
  readonly start: number;
  readonly end: number;
  /** 1-based line and column of `start`. */
  readonly line: number;
  readonly column: number;
}

const PRESET_ID = '@secretlint/secretlint-rule-preset-recommend';
const CONFIG = { rules: [{ id: PRESET_ID, rule: recommended }] };

/**
 * Credentials in URLs whatever the scheme (redis://:pw@, amqp://u:pw@, mongodb+srv://u:pw@ …): the preset
 * covers http(s) basic auth and the common databases; this one rule fills in the other schemes.
 */
const CREDENTIAL_IN_URL = /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@]*:([^\s@/]{3,})@[^\s/]+/gi;

/**
 * Scans text for credentials with secretlint's maintained recommended rule set (cloud keys, private keys,
 * tokens of the common SaaS APIs, connection strings, basic auth in URLs), plus one rule of ours for
 * passwords in URLs of any scheme. Findings are sorted by position and never carry the secret itself.
 *
 * Calls made together are scanned together: one secretlint pass costs ~0.3 ms of set-up whatever its length and
 * ~0.01 ms per short text, so the texts of concurrent writes (and of a batch) are joined into one pass, each
 * starting on a line of its own, and the findings are mapped back to their text.
 */
export function scanSecrets(text: string): Promise<SecretFinding[]> {
  if (text.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    waiting.push({ text, resolve, reject });
    if (waiting.length === 1) setImmediate(scanWaiting);
  });
}

interface Waiting {
  readonly text: string;
  resolve(findings: SecretFinding[]): void;
  reject(err: unknown): void;
}

let waiting: Waiting[] = [];
/** Characters per pass: bounds one pass's memory and its latency for the calls in it. */
const PASS_CHARS = 1_000_000;
const SEPARATOR = '\n\n';

function scanWaiting(): void {
  const all = waiting;
  waiting = [];
  for (let i = 0; i < all.length; ) {
    const pass: Waiting[] = [];
    let chars = 0;
    while (i < all.length && (pass.length === 0 || chars + all[i]!.text.length <= PASS_CHARS)) {
      chars += all[i]!.text.length + SEPARATOR.length;
      pass.push(all[i++]!);
    }
    scanTogether(pass.map((w) => w.text)).then(
      (found) => {
        for (const [j, w] of pass.entries()) w.resolve(found[j]!);
      },
      (err: unknown) => {
        for (const w of pass) w.reject(err);
      },
    );
  }
}

/** Findings of each text, from one secretlint pass over all of them (texts a finding straddles are scanned alone). */
async function scanTogether(texts: readonly string[]): Promise<SecretFinding[][]> {
  const starts: number[] = [];
  let at = 0;
  for (const t of texts) {
    starts.push(at);
    at += t.length + SEPARATOR.length;
  }
  const spans: Array<Array<{ rule: string; kind: string; start: number; end: number }>> = texts.map(() => []);
  const alone = new Set<number>();
  for (const m of await lint(texts.join(SEPARATOR))) {
    const i = itemAt(starts, m.start);
    const from = starts[i]!;
    if (m.end > from + texts[i]!.length) {
      for (let j = i; j < texts.length && starts[j]! < m.end; j++) alone.add(j);
      continue;
    }
    spans[i]!.push({ ...m, start: m.start - from, end: m.end - from });
  }
  for (const i of alone) spans[i] = await lint(texts[i]!);
  return texts.map((t, i) => withOwnRule(t, spans[i]!));
}

async function lint(content: string): Promise<Array<{ rule: string; kind: string; start: number; end: number }>> {
  const result = await lintSource({
    source: { filePath: '/memory.txt', content, ext: '.txt', contentType: 'text' },
    options: { config: CONFIG, locale: 'en', maskSecrets: true },
  });
  return result.messages
    .filter((m) => m.type === 'message')
    .map((m) => ({ rule: m.ruleId, kind: m.messageId, start: m.range[0], end: m.range[1] }));
}

/** The index of the text whose span holds `offset` (`starts` ascending). */
function itemAt(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function withOwnRule(
  text: string,
  preset: ReadonlyArray<{ rule: string; kind: string; start: number; end: number }>,
): SecretFinding[] {
  const found = preset.map((m) => finding(text, m.rule, m.kind, m.start, m.end));
  for (const match of text.matchAll(CREDENTIAL_IN_URL)) {
    const start = match.index;
    const end = start + match[0].length;
    if (found.some((f) => f.start < end && start < f.end)) continue; // the preset already named it
    found.push(finding(text, 'alfred/credential-in-url', 'PasswordInURL', start, end));
  }
  return found.sort((a, b) => a.start - b.start);
}

/** Replaces each finding's span with `[REDACTED:<kind>]` (the per-tenant alternative to refusing). */
export function redactSecrets(text: string, findings: readonly SecretFinding[]): string {
  let out = '';
  let at = 0;
  for (const f of [...findings].sort((a, b) => a.start - b.start)) {
    if (f.start < at) continue; // overlapping findings: the first one's span already covers it
    out += `${text.slice(at, f.start)}[REDACTED:${f.kind}]`;
    at = f.end;
  }
  return out + text.slice(at);
}

function finding(text: string, rule: string, kind: string, start: number, end: number): SecretFinding {
  const before = text.slice(0, start);
  const line = before.split('\n').length;
  const column = start - before.lastIndexOf('\n');
  return { rule, kind, start, end, line, column };
}
