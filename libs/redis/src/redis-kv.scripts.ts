// Lua scripts of the Redis key-value adapter: each runs atomically, so a compare-and-set and its write are one step.
// A key's hash holds `v` (value) and `r` (revision); the bucket's sorted set indexes its keys for prefix listing.
// A revision is the larger of the last one + 1 and Redis's clock in microseconds: a key deleted and written again
// starts above every revision it had. Numbers go through string.format: Lua would print them in %.14g, cutting digits.

const REVISION = `
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end`;

/**
 * KEYS: entry, index, expiry index. ARGV: key, value, expected revision or '', ttl ms or '', change channel, entry
 * key prefix. Returns {revision} or {-1, actual revision} when the compare-and-set lost. With a TTL, the key is also
 * scored by its expiry, and a few keys whose entries expired leave the indexes: a bucket that is never listed (jobs,
 * turn state) does not keep every key it ever had.
 */
export const PUT = `${REVISION}
local cur = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= cur then return {-1, string.format('%.0f', cur)} end
local now = clock()
local rev = string.format('%.0f', math.max(cur + 1, now))
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'r', rev)
redis.call('ZADD', KEYS[2], 0, ARGV[1])
if ARGV[4] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  local ms = math.floor(now / 1000)
  redis.call('ZADD', KEYS[3], ms + tonumber(ARGV[4]), ARGV[1])
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ms, 'LIMIT', 0, 20)) do
    redis.call('ZREM', KEYS[3], k)
    if redis.call('EXISTS', ARGV[6] .. k) == 0 then redis.call('ZREM', KEYS[2], k) end
  end
end
redis.call('PUBLISH', ARGV[5], ARGV[1])
return {rev}
`;

/**
 * KEYS: entry, index, expiry index. ARGV: key, expected revision or '', change channel.
 * Returns {1} (deleted), {0} (nothing there) or {-1, actual revision}.
 */
export const DELETE = `
local cur = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= cur then return {-1, string.format('%.0f', cur)} end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if cur == 0 then return {0} end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return {1}
`;
