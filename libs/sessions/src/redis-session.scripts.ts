// Lua scripts of the Redis session store: each runs atomically, so concurrent writers never interleave inside one.
// Fencing: the meta hash's `fence` field is the newest lease token handed out for the session; a write that carries
// a token (its FENCE argument, '' for none) older than it comes from a holder whose lease lapsed and is refused with
// {-3, newest} in the same step, so it can never land after the next holder's writes began.

/** Lua: returns the newest token when the write's fence (argument `f`) is stale, else false. */
const STALE = (meta: string, f: string) => `
local newest = tonumber(redis.call('HGET', ${meta}, 'fence') or '0')
if ${f} ~= '' and tonumber(${f}) < newest then return {-3, newest} end`;

/** Lua: `owner, token` of the lease value `token:owner` (a bare owner, from before tokens, counts as token 0). */
const PARSE_LEASE = `
local function lease_of(v)
  if not v then return nil, 0 end
  local t, o = string.match(v, '^(%d+):(.*)$')
  if t then return o, tonumber(t) end
  return v, 0
end`;

/** KEYS: meta, messages. ARGV: now, fence, message JSON... Returns {version, length}, {-1} when the session is gone. */
export const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
${STALE('KEYS[1]', 'ARGV[2]')}
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'updated_at', ARGV[1])
return {v, redis.call('LLEN', KEYS[2])}
`;

/** KEYS: meta, messages. ARGV: expected version, now, tokens JSON or '', fence, message JSON... */
export const REPLACE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-2} end
${STALE('KEYS[1]', 'ARGV[4]')}
local cur = tonumber(redis.call('HGET', KEYS[1], 'version'))
if cur ~= tonumber(ARGV[1]) then return {-1, cur} end
redis.call('DEL', KEYS[2])
for i = 5, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'updated_at', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'tokens', ARGV[3]) end
return {v}
`;

/** KEYS: meta, skills. ARGV: now, active skill JSON, skill name or '', fence. Returns {0} when the session is gone. */
export const SET_SKILL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
${STALE('KEYS[1]', 'ARGV[4]')}
redis.call('HSET', KEYS[1], 'active_skill', ARGV[2], 'updated_at', ARGV[1])
if ARGV[3] ~= '' then redis.call('SADD', KEYS[2], ARGV[3]) end
return {1}
`;

/** KEYS: meta. ARGV: field, value, now, fence. Returns {0} when the session is gone. */
export const SET_FIELD = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
${STALE('KEYS[1]', 'ARGV[4]')}
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], 'updated_at', ARGV[3])
return {1}
`;

/**
 * KEYS: lease, meta. ARGV: owner, ttl ms. Returns the token of the owner's lease, 0 when another holds it, -1 when
 * the session is gone. A new holder gets the next token; the holder re-acquiring keeps its own.
 */
export const LEASE_ACQUIRE = `${PARSE_LEASE}
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
local owner, token = lease_of(redis.call('GET', KEYS[1]))
if owner and owner ~= ARGV[1] then return 0 end
if owner then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return token end
token = redis.call('HINCRBY', KEYS[2], 'fence', 1)
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
return token
`;

/** KEYS: lease. ARGV: owner, ttl ms. */
export const LEASE_RENEW = `${PARSE_LEASE}
local owner = lease_of(redis.call('GET', KEYS[1]))
if owner == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** KEYS: lease. ARGV: owner. Compare-and-delete: only the holder releases. */
export const LEASE_RELEASE = `${PARSE_LEASE}
local owner = lease_of(redis.call('GET', KEYS[1]))
if owner == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
