import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { channelStoreContract } from './channel-store.contract.js';
import { FileChannelStore } from './file-channel.store.js';

channelStoreContract(FileChannelStore.name, describe, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-channel-store-'));
  return {
    store: new FileChannelStore(dir, '123'),
    peer: new FileChannelStore(dir, '123'),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
