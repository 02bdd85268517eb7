import type { Scope } from '#contracts';
import { keyToken } from '#kv';

// One bucket holds a tenant's sessions under four prefixes: `s.` the session records (everything but the messages, the
// list of message chunks, and the newest fencing token handed out), `m.` the chunks of messages (written once, never
// changed), `l.` the leases and `o.` which agent each session id belongs to. Agent names, session ids and chunk ids
// are key tokens as they are; tenants of any spelling are encoded.

export const sessionKey = (scope: Scope, id: string) => `s.${keyToken(scope.tenant)}.${scope.agent}.${id}`;
export const agentPrefix = (scope: Scope) => `s.${keyToken(scope.tenant)}.${scope.agent}.`;
export const leaseKey = (scope: Scope, id: string) => `l.${keyToken(scope.tenant)}.${scope.agent}.${id}`;
export const ownerKey = (tenant: string, id: string) => `o.${keyToken(tenant)}.${id}`;
export const chunkPrefix = (scope: Scope, id: string) => `m.${keyToken(scope.tenant)}.${scope.agent}.${id}.`;
export const chunkKey = (scope: Scope, id: string, chunk: string) => `${chunkPrefix(scope, id)}${chunk}`;
