export * from './llm.types.js';
export * from './llm-client.js';
export * from './llm-error.mapper.js';
export * from './structured-output.js';
export * from './llm-client.factory.js';
