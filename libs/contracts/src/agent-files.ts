import { z } from 'zod';
import { AgentName, IsoTimestamp } from './common.js';
import { Writer } from './provenance.js';

export const AGENT_FILE_MAX = 1_000_000;

/** The versioned files every agent has; the wire names the file by kind, the store by its markdown name. */
export const AgentFileKind = z.enum(['user', 'soul', 'memory'], {
  error: 'file must be one of user, soul, memory',
});
export type AgentFileKind = z.infer<typeof AgentFileKind>;

export const agentFileName = {
  user: 'USER.md',
  soul: 'SOUL.md',
  memory: 'MEMORY.md',
} as const satisfies Record<AgentFileKind, string>;

/** GET /agents/{agent}/files/{file}: version 0 with the default header when never written. */
export const AgentFileView = z.object({
  agent: AgentName,
  file: AgentFileKind,
  content: z.string(),
  version: z.number().int().min(0),
  updated_at: IsoTimestamp.nullable(),
});
export type AgentFileView = z.infer<typeof AgentFileView>;

/** One kept version of an agent file; the digest is sha256 of the content, hex. */
export const AgentFileHistoryEntry = z.object({
  version: z.number().int().min(1),
  at: IsoTimestamp,
  reason: z.string(),
  size: z.number().int().min(0),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /**
   * Who made this version (an edit over the API, a restore, learning); absent on versions from before it was recorded.
   */
  writer: Writer.optional(),
});
export type AgentFileHistoryEntry = z.infer<typeof AgentFileHistoryEntry>;

/** GET /agents/{agent}/files/{file}/history: newest first. */
export const AgentFileHistory = z.object({
  agent: AgentName,
  file: AgentFileKind,
  versions: z.array(AgentFileHistoryEntry),
});
export type AgentFileHistory = z.infer<typeof AgentFileHistory>;

/** POST /agents/{agent}/files/{file}/restore body. */
export const AgentFileRestoreBody = z.strictObject({
  version: z.number().int().min(1, 'version must be 1 or more'),
  /** When given, the restore is refused (409, with the newer text) unless the file is still at this version. */
  expected_version: z.number().int().min(0).optional(),
});
export type AgentFileRestoreBody = z.infer<typeof AgentFileRestoreBody>;

export const AgentFileRestored = z.object({
  agent: AgentName,
  file: AgentFileKind,
  version: z.number().int().min(1),
  restored_from: z.number().int().min(1),
});
export type AgentFileRestored = z.infer<typeof AgentFileRestored>;

/** The files a person edits by hand; MEMORY.md is the distiller's output (edit the memories it comes from). */
export const EditableAgentFile = z.enum(['user', 'soul'], {
  error: 'only USER.md and SOUL.md can be edited; MEMORY.md is written by distillation',
});

/** PUT /agents/{agent}/files/{file} body: the new text and the version the editor started from. */
export const AgentFileWriteBody = z.strictObject({
  content: z.string().max(AGENT_FILE_MAX, `agent files are limited to ${AGENT_FILE_MAX} characters`),
  /** The version the text was edited from: the save is refused (409, with the newer text) when the file moved on. */
  expected_version: z
    .number({ error: 'expected_version (the version the edit started from) is required' })
    .int()
    .min(0),
  /** Why it changed, shown in the history. */
  reason: z.string().trim().min(1).max(200).optional(),
});
export type AgentFileWriteBody = z.infer<typeof AgentFileWriteBody>;

export const AgentFileWritten = z.object({
  agent: AgentName,
  file: AgentFileKind,
  version: z.number().int().min(1),
  previous_version: z.number().int().min(0),
  updated_at: IsoTimestamp,
});
export type AgentFileWritten = z.infer<typeof AgentFileWritten>;

/** GET /agents/{agent}/files/{file}/history/{version}: one kept version with its text. */
export const AgentFileVersionView = AgentFileHistoryEntry.extend({
  agent: AgentName,
  file: AgentFileKind,
  content: z.string(),
});
export type AgentFileVersionView = z.infer<typeof AgentFileVersionView>;
