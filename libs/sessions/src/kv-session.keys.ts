import type { Scope } from '#contracts';
import { keyToken } from '#kv';

// One bucket holds a tenant's sessions under three prefixes: `s.` the session records (their messages, and the newest
// fencing token handed out), `l.` the leases and `o.` which agent each session id belongs to. Agent names and session
// ids are key tokens as they are; tenants of any spelling are encoded.

export const sessionKey = (scope: Scope, id: string) => `s.${keyToken(scope.tenant)}.${scope.agent}.${id}`;
export const agentPrefix = (scope: Scope) => `s.${keyToken(scope.tenant)}.${scope.agent}.`;
export const leaseKey = (scope: Scope, id: string) => `l.${keyToken(scope.tenant)}.${scope.agent}.${id}`;
export const ownerKey = (tenant: string, id: string) => `o.${keyToken(tenant)}.${id}`;
