export * from './session-store.js';
export * from './redis-session.store.js';
export * from './file-session.store.js';
export { safeSegment } from './session-record.js';
export * from './session-store.factory.js';
