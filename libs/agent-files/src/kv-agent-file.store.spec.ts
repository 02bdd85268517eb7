import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileKvStore } from '#files';
import { MemoryKvStore } from '#kv';
import { moveFileAgentFiles } from './agent-file.migration.js';
import { agentFileStoreContract } from './agent-file-store.contract.js';
import { KvAgentFileStore } from './kv-agent-file.store.js';

agentFileStoreContract(`${KvAgentFileStore.name} on files`, describe, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-agent-files-'));
  return {
    store: new KvAgentFileStore(new FileKvStore(dataDir)),
    peer: new KvAgentFileStore(new FileKvStore(dataDir)),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

agentFileStoreContract(`${KvAgentFileStore.name} in memory`, describe, async () => {
  const store = new KvAgentFileStore(new MemoryKvStore());
  return { store, peer: store, cleanup: async () => undefined };
});

describe(moveFileAgentFiles.name, () => {
  it("should move an earlier embedded version's files and history to the bucket once, drop its folder", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'alfred-agent-files-move-'));
    try {
      const history = join(dataDir, 'agents', 'acme%2Ecorp', 'jarvis', 'history', 'USER');
      await mkdir(history, { recursive: true });
      const entry = (version: number, content: string) => ({
        version,
        at: `2026-01-0${version}T00:00:00.000Z`,
        reason: `r${version}`,
        size: content.length,
        digest: `sha256:${version}${'0'.repeat(63)}`,
      });
      await writeFile(join(history, '1.md'), 'one');
      await writeFile(join(history, '2.md'), 'two');
      await writeFile(join(history, 'index.json'), JSON.stringify([entry(1, 'one'), entry(2, 'two')]));
      await writeFile(join(dataDir, 'agents', 'acme%2Ecorp', 'jarvis', 'USER.md'), 'two');
      const kv = new FileKvStore(join(dataDir, 'kv', 'agent-files'));

      expect(await moveFileAgentFiles(dataDir, kv)).toBe(1);

      const store = new KvAgentFileStore(kv);
      const scope = { tenant: 'acme.corp', agent: 'jarvis' };
      expect(await store.read(scope, 'user')).toMatchObject({ content: 'two', version: 2 });
      expect((await store.history(scope, 'user')).map((e) => e.reason)).toEqual(['r2', 'r1']);
      expect((await store.readVersion(scope, 'user', 1)).content).toBe('one');
      expect(await store.write(scope, 'user', 'three', { reason: 'r3', expectedVersion: 2 })).toBe(3);
      expect(await readdir(dataDir)).toEqual(['kv']);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
