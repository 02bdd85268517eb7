// Lua scripts of the Redis session store: each runs atomically, so concurrent writers never interleave inside one.

/** KEYS: meta, messages. ARGV: now, message JSON... Returns {version, length}, or {-1} when the session is gone. */
export const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
for i = 2, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'updated_at', ARGV[1])
return {v, redis.call('LLEN', KEYS[2])}
`;

/** KEYS: meta, messages. ARGV: expected version, now, tokens JSON or '', message JSON... */
export const REPLACE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-2} end
local cur = tonumber(redis.call('HGET', KEYS[1], 'version'))
if cur ~= tonumber(ARGV[1]) then return {-1, cur} end
redis.call('DEL', KEYS[2])
for i = 4, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'updated_at', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'tokens', ARGV[3]) end
return {v}
`;

/** KEYS: meta, skills. ARGV: now, active skill JSON, skill name or ''. Returns 0 when the session is gone. */
export const SET_SKILL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'active_skill', ARGV[2], 'updated_at', ARGV[1])
if ARGV[3] ~= '' then redis.call('SADD', KEYS[2], ARGV[3]) end
return 1
`;

/** KEYS: meta. ARGV: field, value, now. Returns 0 when the session is gone. */
export const SET_FIELD = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], 'updated_at', ARGV[3])
return 1
`;

/** KEYS: lease. ARGV: owner, ttl ms. */
export const LEASE_ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if not cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') return 1 end
if cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
`;

/** KEYS: lease. ARGV: owner, ttl ms. */
export const LEASE_RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** KEYS: lease. ARGV: owner. Compare-and-delete: only the holder releases. */
export const LEASE_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
