import { SkillRoutes } from '#contracts';
import type { Bus } from '#bus';
import type { AgentTool, ToolContext } from './tool.types.js';
import { failed, notConfirmed, ok, stringArg } from './tool.types.js';

/** The name the compactor keeps verbatim (calls and results): do not rename. */
export const LOAD_SKILL = 'load_skill';

function unknownSkill(name: string, ctx: ToolContext) {
  const names = ctx.skills.map((s) => s.name);
  return failed(
    `no skill named "${name}"; the skills are: ${names.length ? names.join(', ') : '(none)'}. Check the ` +
      `"Available skills" index.`,
  );
}

/** Renders a skill body as load_skill returns it (and as the active skill joins the system prompt). */
export function renderSkillBody(skill: { name: string; dir: string; body: string }): string {
  return (
    `<skill name="${skill.name}" folder="${skill.dir}">\n${skill.body.trim()}\n</skill>\n` +
    `Files this skill mentions are relative to ${skill.dir}; read them with the read tool by that absolute path.`
  );
}

/**
 * load_skill (level 2), activate_skill / deactivate_skill (user-confirmed skill activation). Only the skills of the
 * turn's index exist for them: the agent's policy already left out the ones it may not use.
 */
export function skillTools(bus: Bus, skillNames: readonly string[]): AgentTool[] {
  const nameSchema = skillNames.length > 0 ? { type: 'string', enum: [...skillNames] } : { type: 'string' };
  const loadSkill: AgentTool = {
    definition: {
      name: LOAD_SKILL,
      description: "Load a skill's full instructions (level 2) by its name from the Available skills index.",
      input_schema: { type: 'object', properties: { name: nameSchema }, required: ['name'] },
    },
    async call(input, ctx) {
      const name = stringArg(input, 'name')!;
      if (!ctx.skills.some((s) => s.name === name)) return unknownSkill(name, ctx);
      const body = await bus.request(SkillRoutes.get, { tenant: ctx.scope.tenant, name });
      ctx.loadedSkills?.add(name);
      return ok(renderSkillBody(body));
    },
  };
  const activate: AgentTool = {
    definition: {
      name: 'activate_skill',
      description:
        'Ask the user to activate a skill for this session: its instructions then stay in your context (one ' +
        'active skill at a time).',
      input_schema: { type: 'object', properties: { name: nameSchema }, required: ['name'] },
    },
    async call(input, ctx) {
      const name = stringArg(input, 'name')!;
      if (!ctx.skills.some((s) => s.name === name)) return unknownSkill(name, ctx);
      const outcome = await ctx.confirm('activate_skill', name, `Activate the skill "${name}" for this session?`);
      if (outcome !== 'approved') return notConfirmed(outcome, `activating the skill "${name}"`);
      await ctx.activeSkillChanged(name);
      return ok(
        `The skill "${name}" is active; its instructions are in your system prompt from now on, and the ` +
          `tools it declares are yours while it stays active.`,
      );
    },
  };
  const deactivate: AgentTool = {
    definition: {
      name: 'deactivate_skill',
      description: 'Deactivate the active skill and return to the base state.',
      input_schema: { type: 'object', properties: {} },
    },
    async call(_input, ctx) {
      await ctx.activeSkillChanged(null);
      return ok('No skill is active now.');
    },
  };
  return [loadSkill, activate, deactivate];
}
