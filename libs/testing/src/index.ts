export * from './reachability.js';
export * from './anthropic-loopback.js';
