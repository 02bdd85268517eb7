export * from './logger.js';
export * from './nest-logger.js';
