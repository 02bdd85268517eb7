export * from './backoff.js';
export * from './retry.js';
export * from './sleep.js';
