import { turnStateContract } from './turn-state.contract.js';
import { MemoryTurnStateStore } from './turn-state.store.js';

describe(MemoryTurnStateStore.name, () => {
  turnStateContract(async () => {
    const store = new MemoryTurnStateStore();
    return { store, dispose: () => store.close() };
  });
});
