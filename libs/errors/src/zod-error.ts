import { ErrorCode } from '#contracts';
import { AlfredError } from './alfred-error.js';
import type { z } from 'zod';

const knownCodes = new Set<string>(Object.values(ErrorCode));
const NUMERIC_ORIGINS = new Set(['number', 'int', 'bigint']);

type Issue = z.core.$ZodIssue;

function issueCode(issue: Issue): ErrorCode {
  if (issue.code === 'custom') {
    const code = (issue.params as { alfredCode?: unknown } | undefined)?.alfredCode;
    if (typeof code === 'string' && knownCodes.has(code)) return code as ErrorCode;
  }
  if ((issue.code === 'too_small' || issue.code === 'too_big') && NUMERIC_ORIGINS.has(issue.origin)) {
    return ErrorCode.ValidationFailed;
  }
  return ErrorCode.BadRequest;
}

/** Ranks codes so the most specific one names the whole error: a custom code, then a range, then 400. */
function rank(code: ErrorCode): number {
  if (code === ErrorCode.BadRequest) return 0;
  if (code === ErrorCode.ValidationFailed) return 1;
  return 2;
}

const pathOf = (issue: Issue) => issue.path.map(String).join('.');

/**
 * Turns a zod failure into the AlfredError every transport reports: the most specific issue names the
 * code and message, every issue (path, message, zod code) goes into details.
 */
export function zodToAlfredError(err: z.ZodError): AlfredError {
  const issues = err.issues.map((issue) => ({ issue, code: issueCode(issue) }));
  const lead = issues.reduce((best, cur) => (rank(cur.code) > rank(best.code) ? cur : best), issues[0]!);
  const path = lead ? pathOf(lead.issue) : '';
  const message = lead ? (path ? `${path}: ${lead.issue.message}` : lead.issue.message) : 'invalid input';
  const details = {
    issues: err.issues.map((issue) => ({ path: pathOf(issue), message: issue.message, code: issue.code })),
  };
  return new AlfredError(lead?.code ?? ErrorCode.BadRequest, message, details, { cause: err });
}
