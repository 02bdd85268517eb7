import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { AgentTool, ToolContext, ToolOutcome } from './tool.types.js';
import { failed, intArg, ok, stringArg } from './tool.types.js';
import { readSkillFile, skillFileOf } from './skill-files.js';
import type { Bus } from '#bus';

const DEFAULT_LIMIT = 2_000;

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** Lines [offset, offset+limit) of a text, 1-based offset, with a note when more follow. */
export function sliceLines(text: string, offset = 1, limit = DEFAULT_LIMIT, maxChars = Infinity): string {
  const lines = text.split('\n');
  const picked = lines.slice(offset - 1, offset - 1 + limit);
  let out = picked.join('\n');
  if (out.length > maxChars) out = `${out.slice(0, maxChars)}\n[output cut at ${maxChars} characters]`;
  const rest = lines.length - (offset - 1 + picked.length);
  if (rest > 0) out += `\n[${rest} more lines: read with offset=${offset + picked.length}]`;
  return out;
}

async function writeNoFollow(path: string, content: string): Promise<void> {
  // O_NOFOLLOW: a symlink planted at the target after the containment check is refused, not followed.
  const fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    await fh.writeFile(content, 'utf8');
  } finally {
    await fh.close();
  }
}

/** read / write / edit, confined to the agent's workspace; skill files from the index are read via the registry. */
export function fileTools(bus: Bus, maxChars: number): AgentTool[] {
  const read: AgentTool = {
    definition: {
      name: 'read',
      description:
        'Read a text file. Relative paths are inside your workspace; skill files can be read by the location ' +
        'the skill index gives. `offset` is the first line (1-based), `limit` the number of lines.',
      input_schema: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          offset: { type: 'integer', minimum: 1 },
          limit: { type: 'integer', minimum: 1 },
        },
        required: ['path'],
      },
    },
    async call(input, ctx): Promise<ToolOutcome> {
      const path = stringArg(input, 'path')!;
      const offset = intArg(input, 'offset', 1);
      const limit = intArg(input, 'limit', 1);
      const skillFile = skillFileOf(path, ctx.skills);
      const text = skillFile
        ? await readSkillFile(bus, ctx.scope.tenant, skillFile)
        : await readFile(await ctx.workspace.resolveExisting(path), 'utf8');
      return ok(sliceLines(text, offset, limit, maxChars));
    },
  };

  const write: AgentTool = {
    definition: {
      name: 'write',
      description: 'Create or overwrite a file in your workspace with the given content (parent folders are created).',
      input_schema: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    },
    async call(input, ctx) {
      const path = stringArg(input, 'path')!;
      const content = stringArg(input, 'content')!;
      refuseSkillPath(path, ctx);
      const target = await ctx.workspace.resolveForWrite(path);
      await ctx.workspace.admit(target, Buffer.byteLength(content), () => writeNoFollow(target, content));
      return ok(`wrote ${Buffer.byteLength(content)} bytes to ${path}`);
    },
  };

  const edit: AgentTool = {
    definition: {
      name: 'edit',
      description:
        'Replace one exact occurrence of oldText with newText in a workspace file. oldText must match exactly once.',
      input_schema: {
        type: 'object',
        properties: { path: { type: 'string' }, oldText: { type: 'string' }, newText: { type: 'string' } },
        required: ['path', 'oldText', 'newText'],
      },
    },
    async call(input, ctx) {
      const path = stringArg(input, 'path')!;
      const oldText = stringArg(input, 'oldText')!;
      const newText = stringArg(input, 'newText')!;
      refuseSkillPath(path, ctx);
      if (oldText.length === 0) return failed('oldText cannot be empty');
      const target = await ctx.workspace.resolveExisting(path);
      const text = await readFile(target, 'utf8');
      const found = countOccurrences(text, oldText);
      if (found === 0) return failed(`oldText was not found in ${path}; nothing changed`);
      if (found > 1)
        return failed(
          `oldText matches ${found} times in ${path}; give more surrounding text so it matches once. Nothing changed.`,
        );
      const at = text.indexOf(oldText);
      const changed = text.slice(0, at) + newText + text.slice(at + oldText.length);
      await ctx.workspace.admit(target, Buffer.byteLength(changed), () => writeNoFollow(target, changed));
      return ok(`replaced 1 occurrence in ${path}`);
    },
  };
  return [read, write, edit];
}

function refuseSkillPath(path: string, ctx: ToolContext): void {
  if (skillFileOf(path, ctx.skills)) throw new Error(`${path} is a skill file; skills are read-only here`);
}
