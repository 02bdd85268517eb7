export * from './bus-handlers.js';
export * from './health.js';
export * from './service-host.js';
export * from './process.js';
export * from './shutdown-deadline.js';
export * from './standalone.js';
export * from './turn-events.js';
export * from './fair-slots.js';
