export * from './alfred-error.js';
export * from './zod-error.js';
export * from './outage.js';
