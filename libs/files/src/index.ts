export * from './atomic-file.js';
export * from './file-kv.store.js';
