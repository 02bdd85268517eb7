export * from './embedder.js';
export * from './text-features.js';
export * from './hashing.embedder.js';
export * from './openai.embedder.js';
