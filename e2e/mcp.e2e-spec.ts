import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { client as restClient, createAgents, startSystem, type TestSystem } from './harness.js';
import { ALICE_ERROR, BOB_ERROR } from './recall-api.suite.js';
import { skillDirs, skillEnv, type SkillDirs } from './skills-fixtures.js';

const KEY_A = 'key-acme-0123456789';
const KEY_B = 'key-globex-0123456789';
const TOOLS = [
  'skills_search',
  'skills_get',
  'skills_index',
  'skills_create',
  'skills_feedback',
  'skills_install',
  'memory_search',
  'memory_record',
  'memory_record_conversation',
  'memory_feedback',
  'checkpoint_save',
  'checkpoint_list',
  'checkpoint_resume',
  'remediation_search',
  'remediation_record',
  'remediation_feedback',
  'recall',
];

type Result = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> };

describe('MCP endpoint (official SDK client over Streamable HTTP)', () => {
  let system: TestSystem;
  let dirs: SkillDirs;
  const clients: Client[] = [];

  const connect = async (headers: Record<string, string>) => {
    const mcp = new Client({ name: 'alfred-e2e', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${system.url}/mcp`), { requestInit: { headers } }));
    clients.push(mcp);
    return mcp;
  };
  const call = async (mcp: Client, name: string, args: Record<string, unknown>) =>
    (await mcp.callTool({ name, arguments: args })) as Result;
  const ok = async (mcp: Client, name: string, args: Record<string, unknown>) => {
    const result = await call(mcp, name, args);
    expect(result.isError ?? false).toBe(false);
    expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent);
    return result.structuredContent;
  };
  const failed = async (mcp: Client, name: string, args: Record<string, unknown>, code: string) => {
    const result = await call(mcp, name, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
    expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent);
    return result.structuredContent.error;
  };

  let alice: Client;
  let mallory: Client;
  let otherTenant: Client;

  beforeAll(async () => {
    dirs = await skillDirs({ withProjectSkills: false });
    system = await startSystem(
      'embedded',
      skillEnv(dirs, {
        ALFRED_SKILLS_WATCH: 'false',
        ALFRED_SKILLS_RESOURCE_MAX_BYTES: '65536',
        ALFRED_API_KEYS: `${KEY_A}=acme,${KEY_B}=globex`,
      }),
    );
    await createAgents(system.url, ['mallory'], { authorization: `Bearer ${KEY_A}` });
    alice = await connect({ authorization: `Bearer ${KEY_A}` });
    mallory = await connect({ authorization: `Bearer ${KEY_A}`, 'x-alfred-agent': 'mallory' });
    otherTenant = await connect({ authorization: `Bearer ${KEY_B}` });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await system?.stop();
    await dirs?.remove();
  });

  it('should refuse a client without an API key like the REST API', async () => {
    const res = await fetch(`${system.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    await expect(connect({})).rejects.toThrow();
  });

  it('should list all 17 tools with JSON schemas generated from the contracts', async () => {
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.description).toEqual(expect.any(String));
      expect(t.inputSchema.type).toBe('object');
    }
    const byName = new Map(tools.map((t) => [t.name, t.inputSchema as any]));
    expect(byName.get('memory_record')).toMatchObject({ required: ['content'], additionalProperties: false });
    expect(byName.get('memory_record').properties.importance).toMatchObject({
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: 0.5,
    });
    expect(byName.get('memory_feedback').required).toEqual(['id', 'helpful']);
    expect(byName.get('memory_record_conversation').required).toEqual(['messages']);
    expect(byName.get('checkpoint_resume').properties.level).toMatchObject({
      enum: ['summary', 'context', 'full'],
      default: 'summary',
    });
    expect(byName.get('recall').properties.budget_tokens).toMatchObject({ type: 'integer', default: 2000 });
  });

  it('should serve the skill tools and report unknown skills and invalid arguments as tool errors', async () => {
    expect((await ok(alice, 'skills_search', { q: 'store a user preference' })).results[0].name).toBe('remember');
    expect(await ok(alice, 'skills_get', { name: 'remember' })).toMatchObject({
      name: 'remember',
      body: expect.stringContaining('# Remember'),
    });
    const index = await ok(alice, 'skills_index', {});
    expect(index.skills.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(['remember', 'recall']));
    expect(await ok(alice, 'skills_index', { format: 'markdown' })).toMatchObject({
      format: 'markdown',
      text: expect.stringContaining('remember'),
    });
    const created = await ok(alice, 'skills_create', {
      name: 'release-notes',
      description: 'Write release notes from merged pull requests. Use when the user prepares a release.',
      body: '# Release notes\n\nList merged pull requests by area.\n',
    });
    expect(created).toMatchObject({ name: 'release-notes', source: 'project' });
    const unknown = await failed(alice, 'skills_get', { name: 'rememberr' }, 'NOT_FOUND');
    expect(unknown.message).toContain('remember');
    await failed(alice, 'skills_search', { q: '' }, 'BAD_REQUEST');
    await failed(alice, 'skills_create', { name: 'release-notes', description: 'Use when twice.' }, 'CONFLICT');
  });

  it("should record, search and rate memories per agent and refuse another agent's memory", async () => {
    const memory = await ok(alice, 'memory_record', {
      content: 'The staging database is rebuilt every Sunday night',
      tags: ['ops'],
    });
    expect(memory).toMatchObject({ id: expect.any(String), importance: 0.5, tags: ['ops'] });
    const found = await ok(alice, 'memory_search', { q: 'staging database rebuilt' });
    expect(found.results[0].id).toBe(memory.id);
    expect(await ok(alice, 'memory_feedback', { id: memory.id, helpful: true })).toMatchObject({
      id: memory.id,
      feedback: { helpful: 1, unhelpful: 0 },
    });
    expect((await ok(alice, 'memory_search', { q: 'staging database rebuilt' })).results[0].feedback).toEqual({
      helpful: 1,
      unhelpful: 0,
    });

    await failed(mallory, 'memory_feedback', { id: memory.id, helpful: false }, 'NOT_FOUND');
    await failed(otherTenant, 'memory_feedback', { id: memory.id, helpful: false }, 'NOT_FOUND');
    expect((await ok(mallory, 'memory_search', { q: 'staging database rebuilt' })).results).toEqual([]);
    await failed(alice, 'memory_record', { content: '' }, 'INVALID_CONTENT');
    await failed(alice, 'memory_record', { content: 'x', importance: 3 }, 'VALIDATION_FAILED');
    await failed(alice, 'memory_feedback', { id: memory.id, helpful: 'yes' }, 'BAD_REQUEST');
  });

  it('should save, list and resume checkpoints', async () => {
    const api = restClient(system.url, { authorization: `Bearer ${KEY_A}` });
    const session = (await api.post('/sessions', {})).body.id as string;
    await api.post(`/sessions/${session}/messages`, {
      messages: [
        { role: 'user', content: 'Port the CLI to Deno' },
        { role: 'assistant', content: 'Started with the arg parser.' },
      ],
    });
    const cp = await ok(alice, 'checkpoint_save', {
      name: 'deno-port',
      session_id: session,
      summary: 'Arg parser ported',
      next: ['port the config loader'],
    });
    expect(cp.session).toMatchObject({ id: session, message_count: 2 });
    expect((await ok(alice, 'checkpoint_list', {})).checkpoints.map((c: { id: string }) => c.id)).toContain(cp.id);
    expect((await ok(mallory, 'checkpoint_list', {})).checkpoints).toEqual([]);
    const resumed = await ok(alice, 'checkpoint_resume', { id: cp.id, level: 'context' });
    expect(resumed).toMatchObject({ checkpoint_id: cp.id, level: 'context', message_count: 3 });
    expect((await api.get(`/sessions/${resumed.session_id}`)).body.messages[2].content).toContain(
      '- port the config loader',
    );
    expect(await ok(alice, 'checkpoint_resume', { id: cp.id })).toMatchObject({ level: 'summary', message_count: 1 });
    await failed(mallory, 'checkpoint_resume', { id: cp.id }, 'NOT_FOUND');
    await failed(alice, 'checkpoint_resume', { id: cp.id, level: 'everything' }, 'BAD_REQUEST');
    await failed(alice, 'checkpoint_save', { name: 'x', summary: 'y', session_id: 'missing-session' }, 'NOT_FOUND');
  });

  it('should record remediations and find them for the same error from another machine', async () => {
    const recorded = await ok(alice, 'remediation_record', ALICE_ERROR);
    await ok(alice, 'remediation_record', {
      error_message: 'SyntaxError: Unexpected token } in JSON at position 12',
      fix: 'Validate the JSON file.',
    });
    const found = await ok(alice, 'remediation_search', { q: BOB_ERROR });
    expect(found.results[0]).toMatchObject({ id: recorded.id, fix: ALICE_ERROR.fix });
    expect((await ok(mallory, 'remediation_search', { q: BOB_ERROR })).results).toEqual([]);
    await failed(alice, 'remediation_record', { error_message: 'x' }, 'BAD_REQUEST');
    expect(await ok(alice, 'remediation_feedback', { id: recorded.id, helpful: true })).toMatchObject({
      feedback: { helpful: 1, unhelpful: 0 },
    });
    await failed(mallory, 'remediation_feedback', { id: recorded.id, helpful: false }, 'NOT_FOUND');
  });

  it("should serve only the skills a named agent's policy permits", async () => {
    const rest = restClient(system.url, { authorization: `Bearer ${KEY_A}` });
    expect(
      (
        await rest.post('/agents', {
          name: 'scoped',
          policy: { skills: { allow: ['recall', 'remem*', 'remediate'], deny: ['remediate'] } },
        })
      ).status,
    ).toBe(201);
    const scoped = await connect({ authorization: `Bearer ${KEY_A}`, 'x-alfred-agent': 'scoped' });

    const index = await ok(scoped, 'skills_index', { format: 'json' });
    expect(index.skills.map((s: { name: string }) => s.name).sort()).toEqual(['recall', 'remember']);
    expect((await ok(scoped, 'skills_index', { format: 'markdown' })).text).not.toContain('**skills**');
    expect(
      (await ok(scoped, 'skills_search', { q: 'store a user preference' })).results.every((r: { name: string }) =>
        ['recall', 'remember'].includes(r.name),
      ),
    ).toBe(true);
    expect((await ok(scoped, 'skills_get', { name: 'remember' })).name).toBe('remember');
    expect((await failed(scoped, 'skills_get', { name: 'remediate' }, 'FORBIDDEN')).message).toContain('policy');
    const uris = (await scoped.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain('skill://remember/SKILL.md');
    expect(uris.some((u) => u.startsWith('skill://skills/'))).toBe(false);
    await expect(scoped.readResource({ uri: 'skill://skills/SKILL.md' })).rejects.toThrow(/policy/);
  });

  it('should recall across kinds within a token budget', async () => {
    const recalled = await ok(alice, 'recall', { q: 'remember a fact in long-term memory', budget_tokens: 4000 });
    expect(recalled.results.length).toBeGreaterThan(0);
    expect(recalled.results.map((h: { kind: string }) => h.kind)).toContain('skill');
    expect(recalled.used_tokens).toBeLessThanOrEqual(4000);
    await failed(alice, 'recall', { q: 'x', budget_tokens: 0 }, 'VALIDATION_FAILED');
  });

  it('should answer an unknown tool with a protocol error', async () => {
    await expect(alice.callTool({ name: 'memory_forget', arguments: {} })).rejects.toThrow(
      /unknown tool memory_forget/,
    );
  });

  it('should expose skills as resources with SHA-256 digests, listed and read', async () => {
    const { resources } = await alice.listResources();
    const skillMd = resources.find((r) => r.uri === 'skill://remember/SKILL.md')!;
    expect(skillMd).toMatchObject({
      mimeType: 'text/markdown',
      _meta: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    const reference = resources.find((r) => r.uri === 'skill://skills/references/api.md');
    expect(reference).toBeDefined();
    const read = await alice.readResource({ uri: 'skill://remember/SKILL.md' });
    const content = read.contents[0] as unknown as { text: string; _meta: { sha256: string } };
    expect(content.text).toContain('name: remember');
    const digest = createHash('sha256').update(content.text).digest('hex');
    expect(content._meta.sha256).toBe(digest);
    expect(skillMd._meta!.sha256).toBe(digest);
    const { resourceTemplates } = await alice.listResourceTemplates();
    expect(resourceTemplates[0]!.uriTemplate).toBe('skill://{name}/{+path}');
    await expect(alice.readResource({ uri: 'skill://no-such-skill/SKILL.md' })).rejects.toThrow(/not found/i);
    await expect(alice.readResource({ uri: 'skill://remember/../../etc/passwd' })).rejects.toThrow();
  });
});
