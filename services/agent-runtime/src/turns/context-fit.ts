import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Workspace } from '../tools/workspace.js';

/** Where cut texts are kept, relative to the agent's workspace. */
export const CUT_DIR = '.alfred/outputs';

/**
 * A text longer than `maxChars` (a tool result, a pasted message) is kept whole in the workspace and replaced by
 * its head and tail with a pointer to the file, so one huge output can never fill the context window.
 */
export async function cutToWorkspace(
  text: string,
  maxChars: number,
  workspace: Workspace,
  name: string,
): Promise<string> {
  if (text.length <= maxChars) return text;
  const file = `${CUT_DIR}/${name.replace(/[^A-Za-z0-9_-]/g, '_')}.txt`;
  const dir = join(await workspace.root(), CUT_DIR);
  await mkdir(dir, { recursive: true });
  await writeFile(join(await workspace.root(), file), text, 'utf8');
  const head = text.slice(0, Math.floor(maxChars * 0.7));
  const tail = text.slice(text.length - Math.floor(maxChars * 0.2));
  const cut = text.length - head.length - tail.length;
  return (
    `${head}\n\n[… ${cut} characters cut here. The whole text (${text.length} characters) is in ${file} in ` +
    `your workspace: read it with read (offset/limit) or search it with bash (grep).]\n\n${tail}`
  );
}

/** The share of the window one text may take before it is cut (a quarter), in characters (~4 per token). */
export function maxCharsFor(contextWindow: number, cap: number): number {
  return Math.max(1_000, Math.min(cap, Math.floor(contextWindow * 4 * 0.25)));
}
