export * from './config.js';
export * from './env-docs.js';
