import { MemoryKvStore } from '#kv';
import { turnStateContract } from './turn-state.contract.js';
import { KvTurnStateStore, TURN_STATE_TTL_MS } from './turn-state.store.js';

describe(`${KvTurnStateStore.name} in memory`, () => {
  turnStateContract(async () => {
    const store = new KvTurnStateStore(new MemoryKvStore({ ttlMs: TURN_STATE_TTL_MS }));
    return { store, dispose: () => store.close() };
  });
});
