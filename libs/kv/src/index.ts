export * from './kv-store.js';
export * from './kv-key.js';
export * from './kv-change-hub.js';
export * from './memory-kv.store.js';
export * from './kv-move.js';
export * from './cached-kv.store.js';
