export * from './address-policy.js';
export * from './fetch-guard.js';
export * from './os/os-sandbox.js';
export * from './skill-digest.js';
export * from './skill-runner.js';
export * from './bash/bash-sandbox.js';
export { announceOsSandbox } from './os/announce.js';
export * from './quota/disk-quota.js';
