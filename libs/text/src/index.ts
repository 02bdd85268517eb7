export * from './analyser.js';
