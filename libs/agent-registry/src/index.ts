export * from './agent-store.js';
export * from './kv-agent.store.js';
