export * from './bus.js';
export * from './codec.js';
export * from './in-process.bus.js';
export * from './nats.bus.js';
export * from './queue.js';
export * from './subject.js';
export * from './zod-error.js';
export * from './topic-subscription.js';
