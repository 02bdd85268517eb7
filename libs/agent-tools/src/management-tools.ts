import type { ToolDefinition } from './tool-definition.js';

const id = {
  type: 'string',
  pattern: '^[a-z0-9]+(-[a-z0-9]+)*$',
  maxLength: 64,
  description: 'Skill id: lowercase letters, digits, single hyphens',
};
const parameter = {
  type: 'object',
  description:
    'One parameter: {type: string|number|integer|boolean|array|object, description?, required?, default?, ' +
    'enum?, minimum?, maximum?, minLength?, maxLength?, minItems?, maxItems?, items?, properties?}',
};
const manifestFields = {
  name: { type: 'string', description: 'Display name (defaults to the id)' },
  description: { type: 'string', description: 'What the skill does; the model reads this to decide when to call it' },
  version: { type: 'string', description: 'Semver; on update the patch number is bumped when omitted' },
  parameters: { type: 'object', additionalProperties: parameter, description: 'Parameters by name' },
  tags: { type: 'array', items: { type: 'string' } },
  timeoutMs: { type: 'integer', minimum: 100, maximum: 300000, description: 'Wall-clock limit (default 30000)' },
  memoryMb: { type: 'integer', minimum: 16, maximum: 1024 },
  permissions: {
    type: 'object',
    description:
      'What the skill may touch: net (allowed hosts), env (variable names), fs.read / fs.write (roots "self" ' +
      'or "shared/<name>")',
    properties: {
      net: { type: 'array', items: { type: 'string' } },
      env: { type: 'array', items: { type: 'string' } },
      fs: {
        type: 'object',
        properties: {
          read: { type: 'array', items: { type: 'string' } },
          write: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
  result: { ...parameter, description: 'Schema the result must match' },
};
const code = {
  type: 'string',
  description:
    'execute.ts: TypeScript run by Node 24 (erasable types only) exporting `async function execute(args, ' +
    'ctx)` that returns {success, result?, error?}; ctx offers fetch, env, readFile, writeFile, log',
};

/** Tools to manage executable skills at runtime. */
export const MANAGEMENT_TOOLS = {
  skill_create: {
    name: 'skill_create',
    description:
      'Create a new executable skill (fails if the id exists). It is your tool skill_<id> at once, for the ' +
      "rest of this turn; to keep it in later turns, name it in a skill's allowed-tools and activate that skill.",
    input_schema: {
      type: 'object',
      properties: { id, ...manifestFields, code },
      required: ['id', 'description', 'code'],
      additionalProperties: false,
    },
    // New code for every agent of the tenant: the user decides, as for delete.
    requiresConfirmation: true,
  },
  skill_update: {
    name: 'skill_update',
    description:
      'Change an executable skill: its code and/or any manifest field. The new version is live at once (and ' +
      'its tool is yours for the rest of this turn).',
    input_schema: {
      type: 'object',
      properties: { id, ...manifestFields, code },
      required: ['id'],
      additionalProperties: false,
    },
    requiresConfirmation: true,
  },
  skill_delete: {
    name: 'skill_delete',
    description: 'Delete an executable skill for good.',
    input_schema: { type: 'object', properties: { id }, required: ['id'], additionalProperties: false },
    requiresConfirmation: true,
  },
  skill_reload: {
    name: 'skill_reload',
    description: 'Re-read the executable skill folders from disk and report what changed.',
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
  },
  skill_list: {
    name: 'skill_list',
    description: 'List executable skills with their status: loaded, or invalid with the reason.',
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
  },
} as const satisfies Record<string, ToolDefinition>;

export type ManagementToolName = keyof typeof MANAGEMENT_TOOLS;

export function isManagementTool(name: string): name is ManagementToolName {
  return Object.hasOwn(MANAGEMENT_TOOLS, name);
}
