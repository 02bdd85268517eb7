import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentStoreContract } from '#testing';
import { FileAgentStore } from './file-agent.store.js';

describe(FileAgentStore.name, () => {
  agentStoreContract(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-agents-'));
    return { store: new FileAgentStore(dir), dispose: () => rm(dir, { recursive: true, force: true }) };
  });
});

describe(`${FileAgentStore.name} read cache`, () => {
  it('should see what another store (another process) wrote to the same file after it was read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-agents-'));
    try {
      const [a, b] = [new FileAgentStore(dir), new FileAgentStore(dir)];
      const record = (name: string, description: string) => ({ name, description, created_at: '2026-11-24T00:00:00.000Z', updated_at: '2026-11-24T00:00:00.000Z' }) as never;
      expect(await a.get('t', 'scout')).toBeUndefined();
      await b.create('t', record('scout', 'first'));
      expect((await a.get('t', 'scout'))?.name).toBe('scout');
      await b.update('t', record('scout', 'second'));
      expect((await a.get('t', 'scout')) as unknown).toMatchObject({ description: 'second' });
      await b.delete('t', 'scout');
      expect(await a.get('t', 'scout')).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
