export * from './reachability.js';
export * from './anthropic-loopback.js';
export * from './poll.js';
export * from './bus-contract.js';
export { deleteStreamsWithPrefix } from '#bus';
export * from './redis-cleanup.js';
export * from './os-sandbox-gate.js';
export * from './telegram-loopback.js';
export * from './own-servers.js';
