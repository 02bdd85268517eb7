export * from './reachability.js';
