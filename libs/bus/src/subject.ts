import { ErrorCode, type EventDef } from '#contracts';
import { AlfredError } from '#errors';

/** NATS wildcard matching: `*` is exactly one token, `>` one or more remaining tokens. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== '*' && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}

/** The subjects a stream must cover for an event: `alfred.memory.created.v1` → `alfred.memory.*.v1.>`. */
export function streamSubjectFor(event: EventDef): string {
  const tokens = event.subject.split('.');
  if (tokens.length < 4) return `${event.subject}.>`;
  tokens[2] = '*';
  return `${tokens.join('.')}.>`;
}

/** Stream names cannot hold dots, wildcards or spaces. */
export function sanitizeStreamName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Keys become one more subject token, so they must not contain separators or wildcards. */
export function keyedSubject(subject: string, key: string): string {
  if (key.length === 0 || /[.*>\s]/.test(key)) {
    throw new AlfredError(
      ErrorCode.BadRequest,
      `event key "${key}" must be one subject token (no dots, wildcards or spaces)`,
    );
  }
  return `${subject}.${key}`;
}
