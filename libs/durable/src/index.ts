export * from './durable-changes.js';
export type { LoggedWrite } from './outbox-records.js';
