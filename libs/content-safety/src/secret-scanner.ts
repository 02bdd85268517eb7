import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';

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
 */
export async function scanSecrets(text: string): Promise<SecretFinding[]> {
  if (text.length === 0) return [];
  const result = await lintSource({
    source: { filePath: '/memory.txt', content: text, ext: '.txt', contentType: 'text' },
    options: { config: CONFIG, locale: 'en', maskSecrets: true },
  });
  const found: SecretFinding[] = result.messages
    .filter((m) => m.type === 'message')
    .map((m) => finding(text, m.ruleId, m.messageId, m.range[0], m.range[1]));
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
