import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { client, startSystem, type TestSystem } from './harness.js';
import { longConversation } from './capabilities.suite.js';

const run = promisify(execFile);

/** The ```bash blocks of a bundled skill, as the model would run them. */
async function bashBlocks(skill: string): Promise<string[]> {
  const text = await readFile(new URL(`../skills/${skill}/SKILL.md`, import.meta.url), 'utf8');
  return [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('bundled skills distill, learn and compact against a live gateway', () => {
  let system: TestSystem;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    system = await startSystem('embedded');
    const api = client(system.url);
    await api.post('/memories', { content: 'User prefers TypeScript for new services', importance: 0.8 });
    await api.post('/memories', { content: 'User prefers TypeScript over Python for services', importance: 0.7 });
    const session = (await api.post('/sessions', {})).body.id as string;
    await api.post(`/sessions/${session}/messages`, { messages: longConversation(20) });
    // what the agent runtime exports for the compact skill
    env = { PATH: process.env.PATH, ALFRED_API_URL: system.url, ALFRED_SESSION_ID: session };
  });
  afterAll(async () => system?.stop());

  it.each(['distill', 'learn', 'compact'])(
    'should run every curl block of the %s skill successfully',
    async (skill) => {
      const blocks = await bashBlocks(skill);
      expect(blocks.length).toBeGreaterThan(0);
      for (const block of blocks) {
        const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block], { env, timeout: 20_000 });
        const body = JSON.parse(stdout);
        expect(body.error).toBeUndefined();
        expect(['completed', 'processing', 'updated', 'no_change']).toContain(body.status);
      }
    },
  );
});
