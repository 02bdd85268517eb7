import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeWithNats, describeWithRedis } from '#testing';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';
import { longConversation } from './capabilities.suite.js';
import { client, createAgents, type Client, type Mode } from './harness.js';
import { skillDirs, skillEnv, type SkillDirs } from './skills-fixtures.js';

const run = promisify(execFile);
const SKILLS_DIR = new URL('../skills/', import.meta.url);

/** The ```bash blocks of a bundled skill, exactly as the model would run them. */
async function bashBlocks(skill: string): Promise<string[]> {
  const text = await readFile(new URL(`${skill}/SKILL.md`, SKILLS_DIR), 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** Every JSON document a block printed (a block may run several curls). */
function jsonDocs(stdout: string): any[] {
  const docs: any[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < stdout.length; i++) {
    const c = stdout[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if ((c === '}' || c === ']') && --depth === 0) docs.push(JSON.parse(stdout.slice(start, i + 1)));
  }
  return docs;
}

/** Who runs the blocks: the API bound to that agent and key, the agent's name, the test's skill folders. */
interface Runner {
  readonly api: Client;
  readonly agent: string;
  readonly dirs: SkillDirs;
}

interface SkillCheck {
  /** Endpoints `GET /` must list for the skill's blocks to run; otherwise they are skipped with a reason. */
  needs: string[];
  /** State the blocks need beyond what earlier skills left. */
  before?(r: Runner): Promise<void>;
  /** How many bash blocks the skill has: a new block needs its check here. */
  blocks: number;
  /**
   * What each block's output must show, by block index (`asAgent`: run by the agent's bash with its scoped credential).
   */
  block(index: number, docs: any[], asAgent: boolean): void;
  /** What the API must show afterwards. */
  after?(r: Runner): Promise<void>;
}

const noError = (docs: any[]) => {
  for (const d of docs) expect(d.error).toBeUndefined();
};

/** One entry per bundled skill, in the order they run (remember stores what recall then finds). */
const CHECKS: Record<string, SkillCheck> = {
  remember: {
    blocks: 4,
    needs: ['/memories', '/memories/batch', '/conversations'],
    block: (i, [doc]) => {
      if (i === 1) expect(doc.created).toBe(2);
      else if (i === 2)
        expect(doc.memories.map((m: any) => m.content)).toEqual([
          'User: We moved the launch to May 12',
          'Assistant: Noted: launch on May 12',
        ]);
      else if (i === 3)
        expect(doc.memories.map((m: any) => m.content)).toEqual([
          'User prefers dark mode in every editor and terminal',
        ]);
      // Its curl names the skill (X-Alfred-Skill): the memory records which skill wrote it.
      else
        expect(doc).toMatchObject({
          id: expect.any(String),
          content: expect.stringMatching(/^User /),
          provenance: { via: 'skill:remember' },
        });
    },
    after: async ({ api }) => {
      const contents = (await api.get('/memories?limit=100')).body.memories.map((m: { content: string }) => m.content);
      expect(contents.sort()).toEqual([
        'Assistant: Noted: launch on May 12',
        'User prefers dark mode in every editor and terminal',
        'User reviews pull requests in the morning',
        'User works on the Alfred project in TypeScript',
        'User: We moved the launch to May 12',
      ]);
    },
  },
  recall: {
    blocks: 3,
    needs: ['/search', '/memories'],
    before: async ({ api }) => {
      expect(
        (
          await api.post('/memories', {
            content: 'User likes the TypeScript and Rust programming languages',
            tags: ['preference'],
          })
        ).status,
      ).toBe(201);
    },
    block: (i, [doc]) => {
      if (i === 0) expect(doc.results[0].content).toBe('User prefers dark mode in every editor and terminal');
      if (i === 1) {
        expect(doc.results[0].content).toBe('User likes the TypeScript and Rust programming languages');
        expect(doc.results.every((r: any) => r.score >= 0.3)).toBe(true);
      }
      if (i === 2) {
        expect(doc.memories.length).toBeGreaterThan(0);
        expect(doc.memories.every((m: any) => m.tags.includes('preference'))).toBe(true);
      }
    },
  },
  skills: {
    blocks: 7,
    // Skills are shared by every agent: the skill the blocks create is removed first, so each run creates it anew.
    before: async ({ api, dirs }) => {
      await rm(join(dirs.projectSkills, 'weekly-report'), { recursive: true, force: true });
      expect((await api.post('/skills/reload')).status).toBe(200);
    },
    needs: [
      '/skills',
      '/skills/search',
      '/skills/{name}',
      '/skills/{name}/resources',
      '/skills/{name}/resources/{path}',
    ],
    block: (i, docs, asAgent) => {
      // The create block is the user's to run: an agent's own credential is refused, and the skill says so.
      if (i === 5 && asAgent) {
        expect(docs[0].error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('consent') });
        return;
      }
      noError(docs);
      if (i === 0) expect(docs[0].results[0].name).toBe('remember');
      if (i === 1) expect(docs[0].skills.map((s: any) => s.name)).toEqual(expect.arrayContaining(Object.keys(CHECKS)));
      if (i === 2)
        expect(docs[0]).toMatchObject({
          format: 'markdown',
          budget: 4000,
          text: expect.stringContaining('- **remember** — '),
        });
      if (i === 3) expect(docs[0]).toMatchObject({ name: 'remember', body: expect.stringContaining('# Remember') });
      if (i === 4) {
        expect(docs[0].resources).toEqual([expect.objectContaining({ path: 'references/api.md', kind: 'text' })]);
        expect(docs[1]).toMatchObject({
          path: 'references/api.md',
          encoding: 'utf8',
          content: expect.stringContaining('GET /skills'),
        });
      }
      if (i === 5) expect(docs[0]).toMatchObject({ name: 'weekly-report', source: 'project' });
      if (i === 6) expect(docs[0]).toMatchObject({ added: [], removed: [], changed: [], indexed: 0 });
    },
    after: async ({ api }) => {
      expect((await api.get('/skills/weekly-report')).body.body).toContain('# Weekly report');
    },
  },
  distill: {
    blocks: 2,
    needs: ['/distill'],
    block: (_i, [doc]) => expect(['completed', 'processing']).toContain(doc.status),
  },
  learn: {
    blocks: 2,
    needs: ['/learn'],
    block: (_i, [doc]) => expect(['updated', 'no_change']).toContain(doc.status),
    after: async ({ api, agent }) => {
      expect((await api.get(`/agents/${agent}/files/user`)).body.content).toContain(
        'tests written before the implementation',
      );
    },
  },
  compact: {
    blocks: 2,
    needs: ['/compact', '/sessions'],
    block: (_i, [doc]) => expect(doc).toMatchObject({ status: 'completed', summary: expect.any(String) }),
  },
  checkpoint: {
    blocks: 3,
    needs: ['/checkpoints', '/checkpoints/{id}/resume', '/sessions'],
    block: (i, docs) => {
      noError(docs);
      if (i === 0)
        expect(docs[0]).toMatchObject({
          name: 'billing-queue-migration',
          session: { message_count: expect.any(Number) },
        });
      if (i === 1)
        expect(docs[0].checkpoints[0]).toMatchObject({
          name: 'billing-queue-migration',
          next: ['switch the consumer', 'drain the old queue until Friday'],
        });
      if (i === 2)
        expect(docs[0]).toMatchObject({ level: 'summary', message_count: 1, session_id: expect.any(String) });
    },
    after: async ({ api }) => {
      const checkpointId = (await api.get('/checkpoints?limit=1')).body.checkpoints[0].id as string;
      const sessions = (await api.get('/sessions?limit=100')).body.sessions;
      const resumed = sessions.find((s: any) => s.metadata?.resumed_from?.checkpoint_id === checkpointId);
      expect(resumed).toMatchObject({ message_count: 1 });
    },
  },
  remediate: {
    blocks: 3,
    needs: ['/remediations', '/remediations/search', '/remediations/{id}/feedback'],
    before: async ({ api }) => {
      const fix = 'Stop the other dev server (it still holds the port) or start on another port.';
      expect(
        (
          await api.post('/remediations', {
            error_message: 'Error: listen EADDRINUSE: address already in use :::3000',
            tool: 'vite',
            fix,
          })
        ).status,
      ).toBe(201);
    },
    block: (i, docs) => {
      noError(docs);
      if (i === 0) expect(docs[0].results[0].fix).toContain('Stop the other dev server');
      if (i === 1) expect(docs[0]).toMatchObject({ tool: 'npm', signature: expect.stringContaining('ERESOLVE') });
      if (i === 2) expect(docs[0].feedback).toEqual({ helpful: 1, unhelpful: 0 });
    },
  },
};

const KEY = 'bundled-skills-key-0123456789';

/** The model's answers to the capabilities the blocks call (compact, distill, learn), whenever they ask. */
function answerCapabilities(sys: AgentSystem): void {
  const system = (body: any) => String(Array.isArray(body.system) ? body.system[0]?.text : (body.system ?? ''));
  const json = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
  sys.model
    .answer(
      (b) => system(b).startsWith('You compact the earlier part'),
      () => json({ summary: 'You planned the deploy step by step.' }),
    )
    .answer(
      (b) => system(b).startsWith("You distill an AI agent's notes"),
      () => json({ insights: [{ text: 'The user prefers dark mode', importance: 0.8, support: 2 }] }),
    )
    .answer(
      (b) => system(b).startsWith("You maintain an AI agent's markdown file"),
      () =>
        json({
          status: 'updated',
          content: '# Notes\n\n- User writes TypeScript and wants tests written before the implementation\n',
          changes: ['added the observation'],
        }),
    );
}
const distributed = (await describeWithNats()) === describe && (await describeWithRedis()) === describe;
const MODES: Mode[] = distributed ? ['embedded', 'nats'] : ['embedded'];

/** A block's output as the bash tool reports it, without the closing exit-code line. */
const stdoutOf = (toolResult: string) => toolResult.replace(/\n?\[exit code \d+\]\s*$/, '');

/**
 * Every block of every bundled skill, in both ways Alfred runs, against a gateway that requires keys: once from
 * a plain shell for the default agent, once through agent turns for a named agent in its own session (the
 * blocks are the bash tool calls the model makes, so they run with exactly the environment an agent gets).
 */
describe.each<Mode>(MODES)('bundled skills: every bash block against a live keyed gateway (%s)', (mode) => {
  let sys: AgentSystem;
  let dirs: SkillDirs;
  let endpoints: Set<string>;
  const auth = { authorization: `Bearer ${KEY}` };

  const skipIfMissing = (skill: string) => {
    const missing = CHECKS[skill]!.needs.filter((path) => !endpoints.has(path));
    if (missing.length > 0) console.warn(`[skip] ${skill} skill blocks: GET / does not list ${missing.join(', ')} yet`);
    return missing.length > 0;
  };
  const checkDocs = (skill: string, outputs: string[], asAgent: boolean) => {
    expect(outputs.length).toBe(CHECKS[skill]!.blocks);
    outputs.forEach((stdout, i) => {
      const docs = jsonDocs(stdout);
      expect(docs.length).toBeGreaterThan(0);
      CHECKS[skill]!.block(i, docs, asAgent);
    });
  };
  const sessionWithHistory = async (api: Client) => {
    const session = (await api.post('/sessions', {})).body.id as string;
    expect((await api.post(`/sessions/${session}/messages`, { messages: longConversation(20) })).status).toBe(200);
    return session;
  };

  beforeAll(async () => {
    dirs = await skillDirs({ withProjectSkills: false });
    sys = await startAgentSystem(
      mode,
      skillEnv(dirs, { ALFRED_SKILLS_WATCH: 'false', ALFRED_API_KEYS: `${KEY}=acme` }),
    );
    endpoints = new Set((await client(sys.url, auth).get('/')).body.endpoints.map((e: { path: string }) => e.path));
    await createAgents(sys.url, ['jarvis'], auth);
    answerCapabilities(sys);
  }, 60_000);
  afterAll(async () => {
    await sys?.stop();
    await dirs?.remove();
  });

  it('should have a check for every bundled skill', async () => {
    const shipped = (await readdir(SKILLS_DIR, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(Object.keys(CHECKS).sort()).toEqual(shipped.sort());
  });

  describe('as the default agent, from a shell', () => {
    let env: NodeJS.ProcessEnv;
    let runner: Runner;
    beforeAll(async () => {
      runner = { api: client(sys.url, auth), agent: 'alfred', dirs };
      env = {
        PATH: process.env.PATH,
        ALFRED_API_URL: sys.url,
        ALFRED_API_KEY: KEY,
        ALFRED_SESSION_ID: await sessionWithHistory(runner.api),
      };
    });

    it.each(Object.keys(CHECKS))(
      'should run every bash block of %s and do what it says',
      async (skill) => {
        if (skipIfMissing(skill)) return;
        await CHECKS[skill]!.before?.(runner);
        const outputs: string[] = [];
        for (const block of await bashBlocks(skill))
          outputs.push((await run('bash', ['-euo', 'pipefail', '-c', block], { env, timeout: 30_000 })).stdout);
        checkDocs(skill, outputs, false);
        await CHECKS[skill]!.after?.(runner);
      },
      60_000,
    );
  });

  describe('as a named agent in its session, through its bash tool', () => {
    let runner: Runner;
    let session: string;
    beforeAll(async () => {
      runner = { api: client(sys.url, { ...auth, 'x-alfred-agent': 'jarvis' }), agent: 'jarvis', dirs };
      session = await sessionWithHistory(runner.api);
    });

    it('should give the agent the gateway it runs behind, its name, its session and its key', async () => {
      sys.model.script(
        {
          content: [
            {
              type: 'tool_use',
              name: 'bash',
              input: {
                command:
                  'echo "$ALFRED_AGENT $ALFRED_SESSION_ID"; curl -sS --fail-with-body -H "Authorization: ' +
                  'Bearer $ALFRED_API_KEY" "$ALFRED_API_URL/agents/jarvis"',
              },
            },
          ],
          stopReason: 'tool_use',
        },
        { content: [{ type: 'text', text: 'Checked.' }] },
      );
      // No X-Alfred-Agent: the session implies its agent.
      const { events } = await streamTurn(sys.url, session, 'Who am I?', auth);
      const [result] = named(events, 'tool_result');
      expect(result).toMatchObject({ is_error: false, content: expect.stringContaining(`jarvis ${session}`) });
      expect(jsonDocs(stdoutOf(result.content))[0]).toMatchObject({ name: 'jarvis' });
    });

    it.each(Object.keys(CHECKS))(
      'should run every bash block of %s as the agent and do what it says',
      async (skill) => {
        if (skipIfMissing(skill)) return;
        await CHECKS[skill]!.before?.(runner);
        const blocks = await bashBlocks(skill);
        sys.model.clear();
        sys.model.script(
          ...blocks.map((block) => ({
            content: [{ type: 'tool_use' as const, name: 'bash', input: { command: `set -euo pipefail\n${block}` } }],
            stopReason: 'tool_use' as const,
          })),
          { content: [{ type: 'text', text: `Ran the ${skill} skill.` }] },
        );
        const { events } = await streamTurn(sys.url, session, `Use the ${skill} skill.`, auth);
        expect(named(events, 'done')[0]).toMatchObject({ status: 'completed', rounds: blocks.length });
        const results = named(events, 'tool_result');
        for (const r of results) expect(r).toMatchObject({ name: 'bash', is_error: false });
        checkDocs(
          skill,
          results.map((r) => stdoutOf(r.content)),
          true,
        );
        await CHECKS[skill]!.after?.(runner);
      },
      60_000,
    );
  });
});
