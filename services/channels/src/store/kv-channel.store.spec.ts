import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileKvStore } from '#files';
import { MemoryKvStore } from '#kv';
import { channelStoreContract } from './channel-store.contract.js';
import { KvChannelStore } from './kv-channel.store.js';

channelStoreContract(`${KvChannelStore.name} on files`, describe, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-channel-store-'));
  const leases = new MemoryKvStore();
  return {
    store: new KvChannelStore(new FileKvStore(dir), leases, '123'),
    peer: new KvChannelStore(new FileKvStore(dir), leases, '123'),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
