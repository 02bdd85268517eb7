export * from './analyser.js';
export * from './token-estimate.js';
