export * from './tool-definition.js';
export * from './management-tools.js';
export * from './executable-skill-tools.js';
export * from './agent-policy.js';
