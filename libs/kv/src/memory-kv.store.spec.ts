import { MemoryKvStore } from './memory-kv.store.js';
import { kvStoreContract } from '#testing';

kvStoreContract(MemoryKvStore.name, describe, async (options) => {
  const store = new MemoryKvStore(options);
  return { store, peer: store, cleanup: () => store.close() };
});
