import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skillDirs, skillEnv, type SkillDirs } from './skills-fixtures.js';
import { client, createAgents, type Client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';
import { pollUntil, type ScriptedReply } from '#testing';

const CODE = (result: string) => `export async function execute() { return { success: true, result: '${result}' }; }`;
const call = (name: string, input: Record<string, unknown> = {}): ScriptedReply => ({
  content: [{ type: 'tool_use', name, input }],
  stopReason: 'tool_use',
});
const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });

/** Seed 002/004 through real turns: skills declare tools, an agent's policy limits what it may use. */
describe('agent policy and the tools skills declare', () => {
  let sys: AgentSystem;
  let dirs: SkillDirs;
  let api: Client;

  beforeAll(async () => {
    dirs = await skillDirs({ withProjectSkills: false });
    await mkdir(join(dirs.projectSkills, 'weather-desk'), { recursive: true });
    await writeFile(
      join(dirs.projectSkills, 'weather-desk', 'SKILL.md'),
      '---\nname: weather-desk\ndescription: Answer weather questions. Use when the user asks about the ' +
        'weather.\nallowed-tools: skill_forecast\n---\n# Weather desk\n\nCall skill_forecast.\n',
    );
    sys = await startAgentSystem(
      'embedded',
      skillEnv(dirs, {
        ALFRED_SKILLS_WATCH: 'false',
        ALFRED_CONFIRM_TIMEOUT_MS: '300',
        ALFRED_SKILL_INDEX_TTL_MS: '0',
        ALFRED_MEMORY_CONTEXT_LIMIT: '0',
      }),
    );
    api = client(sys.url);
    for (const id of ['forecast', 'filler-one', 'filler-two']) {
      expect(
        (
          await api.post('/executable-skills', {
            id,
            description: `The ${id} tool`,
            code: CODE(id === 'forecast' ? 'sunny' : id),
          })
        ).status,
      ).toBe(201);
    }
    await createAgents(sys.url, ['limited']);
    const policy = {
      skills: { allow: ['*'], deny: ['remember'] },
      tools: { allow: ['*'], deny: ['skill_delete', 'skill_filler_*', 'bash'] },
    };
    expect((await api.call('PATCH', '/agents/limited', { policy })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await sys?.stop();
    await dirs?.remove();
  });
  beforeEach(() => sys.model.clear());

  const toolsOf = (i: number) =>
    sys.model.messageRequests[i]!.body.tools.map((t: { name: string }) => t.name) as string[];
  const approve = (id: string) => async (e: { event: string; data: any }) => {
    if (e.event === 'confirmation_request')
      await api.post(`/sessions/${id}/confirm`, { request_id: e.data.request_id, approve: true });
  };

  it('should offer an executable skill as a tool only while a skill that declares it is active', async () => {
    const id = (await api.post('/sessions', {})).body.id as string;
    sys.model.script(
      call('activate_skill', { name: 'weather-desk' }),
      call('skill_forecast'),
      call('deactivate_skill'),
      say('It will be sunny.'),
    );

    const { events } = await streamTurn(sys.url, id, 'Weather tomorrow?', {}, approve(id));

    expect(named(events, 'done')[0]).toMatchObject({ status: 'completed', rounds: 3 });
    expect(toolsOf(0)).not.toContain('skill_forecast');
    expect(toolsOf(0)).toEqual(
      expect.arrayContaining(['read', 'write', 'edit', 'bash', 'load_skill', 'activate_skill', 'skill_create']),
    );
    expect(toolsOf(1)).toContain('skill_forecast');
    expect(toolsOf(1).filter((n) => n.startsWith('skill_filler'))).toEqual([]);
    expect(named(events, 'tool_result')[1]).toMatchObject({
      name: 'skill_forecast',
      is_error: false,
      content: expect.stringContaining('sunny'),
    });
    expect(toolsOf(3)).not.toContain('skill_forecast');
  });

  it('should hold an agent to its policy: index, load_skill, activate_skill and tools', async () => {
    const id = (await api.post('/sessions', {}, { 'x-alfred-agent': 'limited' })).body.id as string;
    sys.model.script(
      call('load_skill', { name: 'remember' }),
      call('activate_skill', { name: 'remember' }),
      call('skill_filler_one'),
      call('bash', { command: 'echo ran' }),
      say('I cannot.'),
    );

    const { events } = await streamTurn(sys.url, id, 'Remember this.');

    const first = sys.model.messageRequests[0]!.body;
    const system = first.system.map((b: { text: string }) => b.text).join('\n');
    expect(system).toContain('**recall**');
    expect(system).not.toContain('**remember**');
    expect(
      first.tools.find((t: { name: string }) => t.name === 'load_skill').input_schema.properties.name.enum,
    ).not.toContain('remember');
    expect(toolsOf(0)).not.toContain('skill_delete');
    expect(toolsOf(0)).toContain('skill_create');
    // A core tool in the deny list is neither offered nor run.
    expect(toolsOf(0)).not.toContain('bash');
    expect(toolsOf(0)).toContain('read');
    for (const r of named(events, 'tool_result')) expect(r.is_error).toBe(true);
    expect(named(events, 'tool_result').find((r) => r.name === 'bash')?.content).toMatch(
      /policy does not permit the tool "bash"/,
    );
    expect(JSON.stringify(named(events, 'tool_result'))).not.toContain('ran\\n');
    expect(named(events, 'confirmation_request')).toEqual([]);
  });

  it('should hold the REST API acting as the agent to its policy: skills, files, search, index, tools', async () => {
    const limited = { 'x-alfred-agent': 'limited' };
    const denied = await api.get('/skills/remember', limited);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'FORBIDDEN', details: { skill: 'remember', agent: 'limited' } });
    expect((await api.get('/skills/remember/resources', limited)).status).toBe(403);
    expect((await api.post('/skills/remember/feedback', { success: true }, limited)).status).toBe(403);
    expect((await api.get('/skills/recall', limited)).status).toBe(200);
    const index = (await api.get('/skills', limited)).body.skills.map((s: { name: string }) => s.name) as string[];
    expect(index).toContain('recall');
    expect(index).not.toContain('remember');
    const found = (await api.get('/skills/search?q=remember', limited)).body.results.map(
      (r: { name: string }) => r.name,
    ) as string[];
    expect(found).not.toContain('remember');
    const tool = await api.post('/executable-skills/filler-one/execute', {}, limited);
    expect(tool.status).toBe(403);
    expect(tool.body.error).toMatchObject({ code: 'FORBIDDEN', details: { tool: 'skill_filler_one' } });
    expect((await api.post('/executable-skills/forecast/execute', {}, limited)).status).toBe(200);
    // Another agent (here the default one) is held to its own policy only.
    expect((await api.get('/skills/remember')).status).toBe(200);
    expect((await api.post('/executable-skills/filler-one/execute', {})).status).toBe(200);
  });

  it('should offer a tool made by skill_create at once, in the same turn', async () => {
    const id = (await api.post('/sessions', {})).body.id as string;
    sys.model.script(
      call('skill_create', { id: 'dice', description: 'Rolls a die', code: CODE('4') }),
      call('skill_dice'),
      say('You rolled 4.'),
    );

    // Creating shared code asks the user first; the test says yes.
    const { events } = await streamTurn(sys.url, id, 'Make a dice tool and roll it.', {}, async (e) => {
      if (e.event === 'confirmation_request')
        await api.post(`/sessions/${id}/confirm`, { request_id: e.data.request_id, approve: true });
    });

    expect(named(events, 'confirmation_request')).toHaveLength(1);
    const [created, rolled] = named(events, 'tool_result');
    expect(created).toMatchObject({
      is_error: false,
      content: expect.stringContaining('skill_dice is one of your tools'),
    });
    expect(rolled).toMatchObject({ name: 'skill_dice', is_error: false, content: expect.stringContaining('"4"') });
    expect(toolsOf(1)).toContain('skill_dice');
    // Who wrote it: this session and turn through skill_create (its provenance); the roll counted as a success.
    const dice = (await api.get('/executable-skills/dice')).body;
    expect(dice.provenance).toEqual({
      tenant: 'default',
      agent: 'alfred',
      session: id,
      turn: expect.any(String),
      via: 'tool:skill_create',
      written_at: expect.any(String),
    });
    expect(dice.provenance.turn).toBe(named(events, 'started')[0]?.turn_id);
    // The roll is counted just after its answer.
    await pollUntil(
      async () => (await api.get('/executable-skills/dice')).body.outcomes?.success === 1,
      10_000,
      'the roll counted',
    );
    expect((await api.get('/executable-skills/dice')).body.outcomes).toMatchObject({ success: 1, failure: 0 });
    expect(
      (await api.get(`/executable-skills?written_session=${id}`)).body.skills.map((s: { id: string }) => s.id),
    ).toEqual(['dice']);
  });

  it('should tell the model a confirmation nobody answered timed out, not that the user declined', async () => {
    const id = (await api.post('/sessions', {})).body.id as string;
    sys.model.script(call('activate_skill', { name: 'recall' }), say('Later then.'));

    const { events } = await streamTurn(sys.url, id, 'Use recall.');

    const [result] = named(events, 'tool_result');
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/Nobody answered/);
    expect(result.content).not.toMatch(/The user declined/);
  });
});
