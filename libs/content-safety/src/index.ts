export * from './secret-scanner.js';
export * from './secret-guard.js';
export * from './injection-detector.js';
