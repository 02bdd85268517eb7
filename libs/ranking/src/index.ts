export * from './signals.js';
export * from './ranker.js';
export * from './lexical-score.js';
