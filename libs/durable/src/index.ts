export * from './durable-changes.js';
