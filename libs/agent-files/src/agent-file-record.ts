import { createHash } from 'node:crypto';
import {
  AGENT_FILE_MAX,
  agentFileName,
  ErrorCode,
  type AgentFileHistoryEntry,
  type AgentFileKind,
  type Writer,
} from '#contracts';
import { AlfredError } from '#errors';

const DEFAULT_BODIES: Record<AgentFileKind, string> = {
  user: 'What this agent knows about its user: preferences, context and ways of working.',
  soul: 'Who this agent is: its voice, values and boundaries.',
  memory: "Durable insights distilled from this agent's memories and sessions.",
};

/** The content of a file that was never written. */
export function defaultContent(file: AgentFileKind): string {
  return `# ${agentFileName[file]}\n\n${DEFAULT_BODIES[file]}\n`;
}

export function digestOf(content: string): string {
  return `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;
}

/** The history entry of a new version (everything but its number). */
export function entryFor(content: string, reason: string, writer?: Writer): Omit<AgentFileHistoryEntry, 'version'> {
  return {
    at: new Date().toISOString(),
    reason,
    size: Buffer.byteLength(content, 'utf8'),
    digest: digestOf(content),
    ...(writer ? { writer } : {}),
  };
}

export function checkContent(content: string): void {
  if (content.length > AGENT_FILE_MAX) {
    throw new AlfredError(ErrorCode.PayloadTooLarge, `agent files are limited to ${AGENT_FILE_MAX} characters`, {
      size: content.length,
    });
  }
}

export function fileConflict(file: AgentFileKind, expected: number, actual: number): AlfredError {
  return new AlfredError(
    ErrorCode.Conflict,
    `${agentFileName[file]} changed since it was read (expected version ${expected}, now ${actual})`,
    { file, expected_version: expected, version: actual },
  );
}

export function versionNotFound(file: AgentFileKind, version: number): AlfredError {
  return new AlfredError(ErrorCode.NotFound, `${agentFileName[file]} has no version ${version}`, { file, version });
}

export function restoreReason(version: number): string {
  return `restore of version ${version}`;
}
