import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentStoreContract } from './agent-store.contract.js';
import { FileAgentStore } from './file-agent.store.js';

describe(FileAgentStore.name, () => {
  agentStoreContract(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-agents-'));
    return { store: new FileAgentStore(dir), dispose: () => rm(dir, { recursive: true, force: true }) };
  });
});
