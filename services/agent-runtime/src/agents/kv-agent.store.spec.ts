import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvAgentStore } from '#agent-registry';
import { FileKvStore } from '#files';
import { MemoryKvStore } from '#kv';
import { agentStoreContract } from '#testing';
import { moveFileAgents } from './file-agents.migration.js';

const record = (name: string, persona = '') => ({
  name,
  persona,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

describe(`${KvAgentStore.name} on files`, () => {
  agentStoreContract(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-agents-'));
    return { store: new KvAgentStore(new FileKvStore(dir)), dispose: () => rm(dir, { recursive: true, force: true }) };
  });

  it('should show what another instance over the same folder wrote', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-agents-'));
    try {
      const [a, b] = [new KvAgentStore(new FileKvStore(dir)), new KvAgentStore(new FileKvStore(dir))];
      expect(await a.get('t', 'scout')).toBeUndefined();
      await b.create('t', record('scout', 'first'));
      expect((await a.get('t', 'scout'))?.persona).toBe('first');
      await b.update('t', record('scout', 'second'));
      expect((await a.get('t', 'scout'))?.persona).toBe('second');
      await b.delete('t', 'scout');
      expect(await a.get('t', 'scout')).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe(`${KvAgentStore.name} in memory`, () => {
  agentStoreContract(async () => ({ store: new KvAgentStore(new MemoryKvStore()), dispose: async () => undefined }));
});

describe(moveFileAgents.name, () => {
  it("should move an earlier version's per-tenant files into the registry once, keeping records there", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-agents-move-'));
    try {
      await mkdir(join(dir, 'agent-registry'));
      const tenantFile = join(dir, 'agent-registry', `${encodeURIComponent('acme.corp').replace(/\./g, '%2E')}.json`);
      await writeFile(tenantFile, JSON.stringify({ scout: record('scout', 'old'), jarvis: record('jarvis', 'moved') }));
      const registry = new KvAgentStore(new FileKvStore(join(dir, 'kv', 'agents')));
      await registry.create('acme.corp', record('scout', 'newer'));

      expect(await moveFileAgents(dir, registry)).toBe(2);

      expect((await registry.list('acme.corp')).map((r) => [r.name, r.persona])).toEqual([
        ['jarvis', 'moved'],
        ['scout', 'newer'],
      ]);
      expect(await readdir(join(dir, 'agent-registry'))).toEqual([]);
      expect(await moveFileAgents(dir, registry)).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
