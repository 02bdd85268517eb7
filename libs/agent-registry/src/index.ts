export * from './agent-store.js';
export * from './nats-kv-agent.store.js';
