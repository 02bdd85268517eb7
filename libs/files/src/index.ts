export * from './atomic-file.js';
export * from './jsonl-log.js';
