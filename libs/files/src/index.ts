export * from './atomic-file.js';
