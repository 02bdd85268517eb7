export * from './embedder.js';
export * from './text-features.js';
export * from './hashing.embedder.js';
export * from './openai.embedder.js';
export * from './onnx.embedder.js';
export * from './cached.embedder.js';
export * from './embedder.factory.js';
export * from './model-pull.js';
