export * from './agent-file-store.js';
export * from './kv-agent-file.store.js';
export * from './agent-file-store.factory.js';
export * from './bus-agent-files.js';
