export * from './address-policy.js';
export * from './fetch-guard.js';
export { sandboxArgv } from './sandbox-command.js';
export * from './os/os-sandbox.js';
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './sandbox-protocol.js';
export * from './skill-digest.js';
export * from './skill-runner.js';
export { WarmPool, type WarmPoolOptions } from './warm-pool.js';
