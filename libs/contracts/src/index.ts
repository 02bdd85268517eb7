export * from './common.js';
export * from './errors.js';
export * from './memory.js';
export * from './route.js';
export * from './system.js';
export * from './sessions.js';
export * from './agent-files.js';
