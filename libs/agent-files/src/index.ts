export * from './agent-file-store.js';
export * from './redis-agent-file.store.js';
export * from './file-agent-file.store.js';
export { defaultContent, digestOf } from './agent-file-record.js';
export * from './agent-file-store.factory.js';
