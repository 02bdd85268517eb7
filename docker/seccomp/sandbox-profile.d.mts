// Types of sandbox-profile.mjs for the TypeScript that reads it (e2e/compose.e2e-spec.ts).
export declare const BUBBLEWRAP_CALLS: string[];
export declare function sandboxProfile<T extends { syscalls: unknown[] }>(dockerDefault: T): T;
