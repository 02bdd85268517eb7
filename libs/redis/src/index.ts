export * from './redis-client.js';
export * from './redis-kv.store.js';
