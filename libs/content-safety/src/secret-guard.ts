import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { redactSecrets, scanSecrets, type SecretFinding } from './secret-scanner.js';

/** Where in a request the scanned text sits (a field, an item of a batch), for the error's details. */
export interface SecretLocation {
  readonly field?: string;
  readonly index?: number;
}

/** The public part of a finding: rule, kind and position, never the secret. */
export function describeFinding(f: SecretFinding, at: SecretLocation = {}) {
  return {
    ...at,
    rule: f.rule,
    kind: f.kind,
    position: { start: f.start, end: f.end, line: f.line, column: f.column },
  };
}

/** A write refused because its content holds a credential (422 SECRET_DETECTED). */
export class SecretDetectedError extends AlfredError {
  constructor(findings: readonly SecretFinding[], at: SecretLocation = {}) {
    const f = findings[0]!;
    const where = [at.index === undefined ? '' : `item ${at.index}`, at.field ?? ''].filter(Boolean).join(' ');
    super(
      ErrorCode.SecretDetected,
      `${where ? `${where}: ` : ''}content holds a credential (${f.kind}, rule ${f.rule}) ` +
        `at line ${f.line}, column ${f.column} (characters ${f.start}-${f.end})` +
        `${findings.length > 1 ? ` and ${findings.length - 1} more` : ''}; nothing was stored. ` +
        'Remove the secret and store a reference to where it is kept instead.',
      { findings: findings.map((x) => describeFinding(x, at)) },
    );
    this.name = 'SecretDetectedError';
  }
}

/**
 * The one check every write path calls before it stores text: clean text passes unchanged; text with a
 * credential is refused, or, for tenants that chose redaction, returned with each secret replaced.
 */
export class SecretGuard {
  private readonly redactTenants: ReadonlySet<string>;

  constructor(redactTenants: Iterable<string> = []) {
    this.redactTenants = new Set(redactTenants);
  }

  redacts(tenant: string): boolean {
    return this.redactTenants.has(tenant);
  }

  /** The text to store, or a SecretDetectedError. */
  async admit(tenant: string, text: string, at: SecretLocation = {}): Promise<string> {
    const findings = await scanSecrets(text);
    if (findings.length === 0) return text;
    if (this.redacts(tenant)) return redactSecrets(text, findings);
    throw new SecretDetectedError(findings, at);
  }

  /**
   * Every string inside a value (a checkpoint, a remediation), each admitted with its path as the field; checked
   * together (one scanner pass); a refusal names the field it was found in.
   */
  async admitAll<T>(tenant: string, value: T, path = ''): Promise<T> {
    if (typeof value === 'string') return (await this.admit(tenant, value, path ? { field: path } : {})) as T;
    if (Array.isArray(value))
      return (await Promise.all(value.map((v, i) => this.admitAll(tenant, v, `${path}[${i}]`)))) as T;
    if (typeof value !== 'object' || value === null) return value;
    const entries = await Promise.all(
      Object.entries(value).map(
        async ([k, v]) => [k, await this.admitAll(tenant, v, path ? `${path}.${k}` : k)] as const,
      ),
    );
    return Object.fromEntries(entries) as T;
  }
}
