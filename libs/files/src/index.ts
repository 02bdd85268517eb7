export * from './atomic-file.js';
export * from './jsonl-log.js';
export * from './file-kv.store.js';
