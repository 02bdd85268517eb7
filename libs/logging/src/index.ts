export * from './logger.js';
export * from './line-logger.js';
export * from './nest-logger.js';
export * from './repeated-log.js';
