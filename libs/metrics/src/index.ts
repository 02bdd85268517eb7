export * from './registry.js';
export * from './dependency-states.js';
