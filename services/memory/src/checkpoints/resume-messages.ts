import { createHash } from 'node:crypto';
import type { Checkpoint, ResumeLevel, SessionMessage } from '#contracts';

/** SHA-256 of the messages a checkpoint refers to: a resume refuses a session rewritten since (e.g. compacted). */
export function messagesDigest(messages: readonly SessionMessage[]): string {
  return createHash('sha256').update(JSON.stringify(messages)).digest('hex');
}

/** The note every resumed session ends with: what the checkpoint says was done and comes next. */
export function checkpointNote(c: Checkpoint): SessionMessage {
  const lines = [`Resuming from checkpoint "${c.name}" (saved ${c.created_at}).`, '', 'Summary:', c.summary];
  if (c.done.length > 0) lines.push('', 'Done:', ...c.done.map((d) => `- ${d}`));
  if (c.next.length > 0) lines.push('', 'Next:', ...c.next.map((n) => `- ${n}`));
  return { role: 'user', content: lines.join('\n') };
}

/** A tool result cannot open a transcript: its tool call would be missing. */
function opensCleanly(m: SessionMessage): boolean {
  if (m.role !== 'user') return false;
  return typeof m.content === 'string' || m.content.some((b) => b.type !== 'tool_result');
}

/**
 * The seed of a resumed session: `summary` is the note alone; `context` the last `contextSize` saved
 * messages (cut forward to a user turn that is not a tool result) and then the note; `full` every saved
 * message and then the note. The note comes last so the model answers it: it is where work continues.
 */
export function resumeMessages(
  c: Checkpoint,
  level: ResumeLevel,
  saved: readonly SessionMessage[],
  contextSize: number,
): SessionMessage[] {
  const note = checkpointNote(c);
  if (level === 'summary') return [note];
  let transcript = level === 'full' ? [...saved] : saved.slice(Math.max(0, saved.length - contextSize));
  const start = transcript.findIndex(opensCleanly);
  transcript = start < 0 ? [] : transcript.slice(start);
  return [...transcript, note];
}
