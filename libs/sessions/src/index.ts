export * from './session-store.js';
export * from './kv-session.store.js';
export { safeSegment } from './session-record.js';
export * from './session-store.factory.js';
export * from './bus-sessions.js';
