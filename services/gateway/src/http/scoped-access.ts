import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { CredentialScope } from './scoped-credential.js';

const forbid = (message: string) => new AlfredError(ErrorCode.Forbidden, message);

/**
 * What a scoped credential (the agent's bash) may do beyond its tenant and agent: act in its own session only,
 * never answer its own confirmation requests, start or cancel turns, manage agents, or create/change skills
 * (which need the user's consent — the agent's skill tools ask for it).
 */
export function checkScopedAccess(
  method: string,
  url: string,
  scope: CredentialScope,
  sessionHeader: string | undefined,
): void {
  const [first, second, third] = url.split('?')[0]!.split('/').filter(Boolean).map(safeDecode);
  const write = method !== 'GET' && method !== 'HEAD';
  if (sessionHeader !== undefined && sessionHeader !== scope.session)
    throw forbid('this credential acts only in its own session');
  switch (first) {
    case 'sessions':
      if (second === undefined) throw forbid('this credential cannot list or create sessions');
      if (second !== scope.session) throw forbid('this credential acts only in its own session');
      if (third === 'turns' || third === 'confirm')
        throw forbid("turns and confirmations belong to the user, not to the agent's own commands");
      if (method === 'DELETE' && third === undefined) throw forbid('this credential cannot delete its session');
      return;
    case 'agents':
      if (write || second !== scope.agent) throw forbid('this credential cannot manage agents');
      return;
    case 'skills':
      if (method === 'POST' && second === undefined)
        throw forbid("creating a skill needs the user's consent; ask the user to create it");
      if (write && (second === 'install' || second === 'update' || third === 'update' || method === 'DELETE')) {
        throw forbid("installing, updating or deleting skills needs the user's consent; ask the user to do it");
      }
      return;
    case 'mcp':
      // MCP tools include creating skills; an agent's own commands use the REST API its skills describe.
      throw forbid('the MCP endpoint is for API clients; this credential uses the REST API');
    case 'executable-skills':
      if (write && !(method === 'POST' && (third === 'execute' || second === 'reload'))) {
        throw forbid(
          "creating, changing or deleting executable skills needs the user's consent; use the skill_create / " +
            'skill_update / skill_delete tools',
        );
      }
      return;
    default:
      return;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
