import { z } from 'zod';
import {
  CheckpointId,
  CheckpointListQuery,
  CheckpointRoutes,
  CheckpointSaveBody,
  ConversationIngestBody,
  FeedbackBody,
  MemoryCreateBody,
  MemoryId,
  MemoryRoutes,
  RecallQuery,
  RecallRoutes,
  RemediationId,
  RemediationRecordBody,
  RemediationRoutes,
  RemediationSearchQuery,
  ResumeLevel,
  SearchQuery,
  SkillCreateBody,
  SkillFeedbackBody,
  SkillIndexQuery,
  SkillInstallBody,
  SkillInstallRoutes,
  SkillPathName,
  SkillRoutes,
  SkillSearchQuery,
} from '#contracts';
import { allows, enforcePolicy } from '#agent-tools';
import type { Bus } from '#bus';
import { scopedWriter, writtenFilter, type Caller } from '../http/caller.js';

/** One MCP tool: its arguments are a contract schema, its work the same bus route the REST API uses. */
export interface McpTool<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  /** MCP's hints to clients (e.g. that a tool reaches outside hosts); clients decide what to ask the user. */
  readonly annotations?: {
    readonly destructiveHint?: boolean;
    readonly openWorldHint?: boolean;
    readonly readOnlyHint?: boolean;
  };
  run(bus: Bus, caller: Caller, args: z.output<S>): Promise<unknown>;
}

const tool = <S extends z.ZodType>(t: McpTool<S>): McpTool => t as unknown as McpTool;

/** The skill, unless the calling agent's policy does not permit it (then FORBIDDEN, naming the policy). */
export function permittedSkill(c: Caller, name: string): string {
  enforcePolicy(c.policy, c.scope.agent, 'skill', name);
  return name;
}
const opts = (c: Caller) => ({ context: c.context });
const SLOW = (c: Caller) => ({ context: c.context, timeoutMs: 60_000 });

/** Every tool the gateway's MCP endpoint offers, in the order clients list them. */
export const MCP_TOOLS: readonly McpTool[] = [
  tool({
    name: 'skills_search',
    description:
      'Search skills by meaning and keywords (hybrid search over names, descriptions and bodies); best first ' +
      'with 0..1 scores.',
    input: SkillSearchQuery,
    run: async (bus, c, query) => {
      const found = await bus.request(SkillRoutes.search, { tenant: c.scope.tenant, query }, opts(c));
      const results = found.results.filter((r) => allows(c.policy, 'skill', r.name));
      return { ...found, results, total: found.total - (found.results.length - results.length) };
    },
  }),
  tool({
    name: 'skills_get',
    description:
      "A skill's instructions (the SKILL.md body below its frontmatter) and metadata; an unknown name lists " +
      'close matches.',
    input: z.strictObject({ name: SkillPathName }),
    run: (bus, c, { name }) =>
      bus.request(SkillRoutes.get, { tenant: c.scope.tenant, name: permittedSkill(c, name) }, opts(c)),
  }),
  tool({
    name: 'skills_index',
    description:
      'The level-1 index of every skill (name, description, location): JSON, or rendered as markdown/xml for ' +
      'a prompt within `budget` characters.',
    input: SkillIndexQuery,
    run: async (bus, c, { format, budget, ...filters }) => {
      const only = c.policy?.skills;
      const written = writtenFilter(filters);
      const { rendered, ...index } = await bus.request(
        SkillRoutes.index,
        { tenant: c.scope.tenant, ...(budget === undefined ? {} : { budget }), ...(only ? { only } : {}), ...written },
        opts(c),
      );
      return format === 'json' ? index : { format, ...rendered[format], budget: index.budget };
    },
  }),
  tool({
    name: 'skills_create',
    description:
      'Create a project skill (SKILL.md) from a name, a "Use when ..." description and a markdown body; ' +
      'validated strictly first.',
    input: SkillCreateBody,
    run: (bus, c, skill) =>
      bus.request(
        SkillRoutes.create,
        { tenant: c.scope.tenant, skill, writer: scopedWriter(c, 'mcp:skills_create') },
        SLOW(c),
      ),
  }),
  tool({
    name: 'skills_feedback',
    description:
      'Record whether a use of a skill achieved its goal (success true/false, by user or agent); reliable ' +
      'skills rank higher in skills_search and the index.',
    input: SkillFeedbackBody.extend({ name: SkillPathName }),
    run: (bus, c, { name, ...feedback }) =>
      bus.request(SkillRoutes.feedback, { tenant: c.scope.tenant, name: permittedSkill(c, name), feedback }, opts(c)),
  }),
  tool({
    name: 'skills_install',
    description:
      'Install the skills of a git repository (https://, git://, or owner/repo on GitHub; optional ref and ' +
      'path) into this tenant, pinned to a commit. ' +
      'Confirmation required: without confirm=true nothing is installed and the answer says what would be ' +
      '(skills, refusals with their problems, ' +
      'the commit); show it to the user, and only on their yes call again with confirm=true and ' +
      'expect_commit set to that commit.',
    input: SkillInstallBody.omit({ dry_run: true }).extend({ confirm: z.boolean().default(false) }),
    annotations: { destructiveHint: true, openWorldHint: true },
    run: async (bus, c, { confirm, ...body }) => {
      const request = {
        tenant: c.scope.tenant,
        body: { ...body, dry_run: !confirm },
        writer: scopedWriter(c, 'mcp:skills_install'),
      };
      const result = await bus.request(SkillInstallRoutes.install, request, { context: c.context });
      if (confirm) return result;
      return {
        ...result,
        confirm_required: true,
        confirm_with: { ...body, confirm: true, expect_commit: result.commit },
      };
    },
  }),
  tool({
    name: 'memory_search',
    description:
      'Search this agent\'s memories ("have I solved something like this before?"); ranked by relevance, ' +
      'importance and feedback.',
    input: SearchQuery,
    run: (bus, c, query) => bus.request(MemoryRoutes.search, { scope: c.scope, query }, opts(c)),
  }),
  tool({
    name: 'memory_record',
    description:
      'Store a memory: a self-contained fact, preference, decision or lesson (capture the why), with ' +
      'importance 0..1 and tags.',
    input: MemoryCreateBody,
    run: (bus, c, memory) =>
      bus.request(
        MemoryRoutes.create,
        { scope: c.scope, memory, writer: { ...c.writer, via: 'mcp:memory_record' } },
        opts(c),
      ),
  }),
  tool({
    name: 'memory_record_conversation',
    description:
      'Store a conversation: messages (speaker, content, optional ISO time) in order; each becomes a memory ' +
      '"speaker: content", found later through the messages around it and its date.',
    input: ConversationIngestBody,
    run: (bus, c, conversation) =>
      bus.request(
        MemoryRoutes.ingestConversation,
        { scope: c.scope, conversation, writer: { ...c.writer, via: 'mcp:memory_record_conversation' } },
        opts(c),
      ),
  }),
  tool({
    name: 'memory_feedback',
    description:
      'Report whether a memory helped (helpful: true/false, optional note); it moves the memory up or down ' +
      'in later searches.',
    input: z.strictObject({ id: MemoryId, ...FeedbackBody.shape }),
    run: (bus, c, { id, ...feedback }) => bus.request(MemoryRoutes.feedback, { scope: c.scope, id, feedback }, opts(c)),
  }),
  tool({
    name: 'checkpoint_save',
    description:
      'Save a named checkpoint of work in progress: summary, what is done, what is next, and (by reference) ' +
      "a session's messages.",
    input: CheckpointSaveBody,
    run: (bus, c, checkpoint) =>
      bus.request(
        CheckpointRoutes.save,
        { scope: c.scope, checkpoint, writer: { ...c.writer, via: 'mcp:checkpoint_save' } },
        opts(c),
      ),
  }),
  tool({
    name: 'checkpoint_list',
    description: "This agent's checkpoints, newest first, paginated (limit, offset), optionally by tag.",
    input: CheckpointListQuery,
    run: (bus, c, query) => bus.request(CheckpointRoutes.list, { scope: c.scope, query }, opts(c)),
  }),
  tool({
    name: 'checkpoint_resume',
    description:
      'Start a new session from a checkpoint: level summary (the note only), context (plus the last saved ' +
      'messages) or full (every saved message).',
    input: z.strictObject({ id: CheckpointId, level: ResumeLevel.default('summary') }),
    run: (bus, c, { id, level }) => bus.request(CheckpointRoutes.resume, { scope: c.scope, id, level }, opts(c)),
  }),
  tool({
    name: 'remediation_search',
    description:
      'Find recorded fixes for an error: pass the error text as q; paths, numbers, ids and quoted values are ' +
      'normalised away.',
    input: RemediationSearchQuery,
    run: (bus, c, query) => bus.request(RemediationRoutes.search, { scope: c.scope, query }, opts(c)),
  }),
  tool({
    name: 'remediation_record',
    description:
      'Record how an error was fixed (error_message, optional stack and tool, the fix) so the next ' +
      'occurrence finds it.',
    input: RemediationRecordBody,
    run: (bus, c, remediation) =>
      bus.request(
        RemediationRoutes.record,
        { scope: c.scope, remediation, writer: { ...c.writer, via: 'mcp:remediation_record' } },
        opts(c),
      ),
  }),
  tool({
    name: 'remediation_feedback',
    description:
      'Report whether a recorded fix worked (helpful: true/false, optional note); it moves the fix up or ' +
      'down in later searches.',
    input: z.strictObject({ id: RemediationId, ...FeedbackBody.shape }),
    run: (bus, c, { id, ...feedback }) =>
      bus.request(RemediationRoutes.feedback, { scope: c.scope, id, feedback }, opts(c)),
  }),
  tool({
    name: 'recall',
    description:
      'One ranked list from memories, remediations and skills for a query, filled into budget_tokens: what ' +
      'to paste into context.',
    input: RecallQuery,
    run: (bus, c, query) => bus.request(RecallRoutes.recall, { scope: c.scope, query }, opts(c)),
  }),
];

/** The tool's arguments as JSON Schema (what a caller may send, defaults included), generated from the contract. */
export function inputJsonSchema(schema: z.ZodType): { type: 'object'; [key: string]: unknown } {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { ...json, type: 'object' };
}
