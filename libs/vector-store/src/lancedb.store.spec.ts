import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LanceDbStore } from './lancedb.store.js';
import { vectorStoreContract } from './vector-store.contract.js';

vectorStoreContract(describe, LanceDbStore.name, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-lancedb-'));
  return {
    create: () => Promise.resolve(new LanceDbStore({ dir, tuning: { optimizeEveryRows: 50 } })),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
