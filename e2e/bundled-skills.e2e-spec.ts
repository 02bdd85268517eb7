import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { longConversation } from './capabilities.suite.js';
import { client, startSystem, type Client, type TestSystem } from './harness.js';
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

interface SkillCheck {
  /** Endpoints `GET /` must list for the skill's blocks to run; otherwise they are skipped with a reason. */
  needs: string[];
  /** State the blocks need beyond what earlier skills left. */
  before?(api: Client): Promise<void>;
  /** How many bash blocks the skill has: a new block needs its check here. */
  blocks: number;
  /** What each block's output must show, by block index. */
  block(index: number, docs: any[]): void;
  /** What the API must show afterwards. */
  after?(api: Client): Promise<void>;
}

const noError = (docs: any[]) => docs.forEach((d) => expect(d.error).toBeUndefined());

/** One entry per bundled skill, in the order they run (remember stores what recall then finds). */
const CHECKS: Record<string, SkillCheck> = {
  remember: {
    blocks: 4,
    needs: ['/memories', '/memories/batch', '/conversations'],
    block: (i, [doc]) => {
      if (i === 1) expect(doc.created).toBe(2);
      else if (i === 2) expect(doc).toMatchObject({ created: 2, memories: [{ content: 'User: We moved the launch to May 12' }, { content: 'Assistant: Noted: launch on May 12' }] });
      else expect(doc).toMatchObject({ id: expect.any(String), content: expect.stringMatching(/^User /) });
    },
    after: async (api) => {
      const contents = (await api.get('/memories?limit=100')).body.memories.map((m: { content: string }) => m.content);
      expect(contents).toEqual(
        expect.arrayContaining([
          'User prefers dark mode in every editor and terminal',
          'User works on the Alfred project in TypeScript',
          'User reviews pull requests in the morning',
          'User wants short answers without preamble',
        ]),
      );
    },
  },
  recall: {
    blocks: 3,
    needs: ['/search', '/memories'],
    before: async (api) => {
      expect((await api.post('/memories', { content: 'User likes the TypeScript and Rust programming languages', tags: ['preference'] })).status).toBe(201);
    },
    block: (i, [doc]) => {
      if (i === 0) expect(doc.results[0].content).toBe('User prefers dark mode in every editor and terminal');
      if (i === 1) {
        expect(doc.results[0].content).toBe('User likes the TypeScript and Rust programming languages');
        expect(doc.results.every((r: any) => r.score >= 0.3)).toBe(true);
      }
      if (i === 2) expect(doc.memories.length).toBeGreaterThan(0), expect(doc.memories.every((m: any) => m.tags.includes('preference'))).toBe(true);
    },
  },
  skills: {
    blocks: 7,
    needs: ['/skills', '/skills/search', '/skills/{name}', '/skills/{name}/resources', '/skills/{name}/resources/{path}'],
    block: (i, docs) => {
      noError(docs);
      if (i === 0) expect(docs[0].results[0].name).toBe('remember');
      if (i === 1) expect(docs[0].skills.map((s: any) => s.name)).toEqual(expect.arrayContaining(Object.keys(CHECKS)));
      if (i === 2) expect(docs[0]).toMatchObject({ format: 'markdown', budget: 4000, text: expect.stringContaining('- **remember** — ') });
      if (i === 3) expect(docs[0]).toMatchObject({ name: 'remember', body: expect.stringContaining('# Remember') });
      if (i === 4) {
        expect(docs[0].resources).toEqual([expect.objectContaining({ path: 'references/api.md', kind: 'text' })]);
        expect(docs[1]).toMatchObject({ path: 'references/api.md', encoding: 'utf8', content: expect.stringContaining('GET /skills') });
      }
      if (i === 5) expect(docs[0]).toMatchObject({ name: 'weekly-report', source: 'project' });
      if (i === 6) expect(docs[0]).toMatchObject({ added: [], removed: [], changed: [], indexed: 0 });
    },
    after: async (api) => {
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
    after: async (api) => {
      expect((await api.get('/agents/alfred/files/user')).body.content).toContain('tests written before the implementation');
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
      if (i === 0) expect(docs[0]).toMatchObject({ name: 'billing-queue-migration', session: { message_count: expect.any(Number) } });
      if (i === 1) expect(docs[0].checkpoints[0]).toMatchObject({ name: 'billing-queue-migration', next: ['switch the consumer', 'drain the old queue until Friday'] });
      if (i === 2) expect(docs[0]).toMatchObject({ level: 'summary', message_count: 1, session_id: expect.any(String) });
    },
    after: async (api) => {
      const checkpointId = (await api.get('/checkpoints?limit=1')).body.checkpoints[0].id as string;
      const sessions = (await api.get('/sessions?limit=100')).body.sessions;
      const resumed = sessions.find((s: any) => s.metadata?.resumed_from?.checkpoint_id === checkpointId);
      expect(resumed).toMatchObject({ message_count: 1 });
    },
  },
  remediate: {
    blocks: 3,
    needs: ['/remediations', '/remediations/search', '/remediations/{id}/feedback'],
    before: async (api) => {
      const fix = 'Stop the other dev server (it still holds the port) or start on another port.';
      expect((await api.post('/remediations', { error_message: 'Error: listen EADDRINUSE: address already in use :::3000', tool: 'vite', fix })).status).toBe(201);
    },
    block: (i, docs) => {
      noError(docs);
      if (i === 0) expect(docs[0].results[0].fix).toContain('Stop the other dev server');
      if (i === 1) expect(docs[0]).toMatchObject({ tool: 'npm', signature: expect.stringContaining('ERESOLVE') });
      if (i === 2) expect(docs[0].feedback).toEqual({ helpful: 1, unhelpful: 0 });
    },
  },
};

describe('bundled skills: every bash block against a live gateway', () => {
  let system: TestSystem;
  let dirs: SkillDirs;
  let api: Client;
  let endpoints: Set<string>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dirs = await skillDirs({ withProjectSkills: false });
    system = await startSystem('embedded', skillEnv(dirs, { ALFRED_SKILLS_WATCH: 'false' }));
    api = client(system.url);
    endpoints = new Set((await api.get('/')).body.endpoints.map((e: { path: string }) => e.path));
    env = { PATH: process.env.PATH, ALFRED_API_URL: system.url };
    if (endpoints.has('/sessions')) {
      const session = (await api.post('/sessions', {})).body.id as string;
      await api.post(`/sessions/${session}/messages`, { messages: longConversation(20) });
      env.ALFRED_SESSION_ID = session;
    }
    // Starts a whole system and seeds a session: more than jest's default 5 s on a loaded 2-core machine.
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
    await dirs?.remove();
  });

  it('should have a check for every bundled skill', async () => {
    const shipped = (await readdir(SKILLS_DIR, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(Object.keys(CHECKS).sort()).toEqual(shipped.sort());
  });

  it.each(Object.keys(CHECKS))('should run every bash block of %s and do what it says', async (skill) => {
    const check = CHECKS[skill]!;
    const missing = check.needs.filter((path) => !endpoints.has(path));
    if (missing.length > 0) {
      console.warn(`[skip] ${skill} skill blocks: GET / does not list ${missing.join(', ')} yet`);
      return;
    }
    await check.before?.(api);
    const blocks = await bashBlocks(skill);
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.length).toBe(check.blocks);
    for (const [i, block] of blocks.entries()) {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block], { env, timeout: 30_000 });
      const docs = jsonDocs(stdout);
      expect(docs.length).toBeGreaterThan(0);
      check.block(i, docs);
    }
    await check.after?.(api);
  });
});
