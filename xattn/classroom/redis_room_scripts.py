"""The Lua scripts of the Redis class store that students, the hub and the store itself run
(a step's info, an answer, a room's view, presence, the join bucket, the pulse, a student's
answers, a restore, the signing keys), and the pieces every script shares (the server's
time, the host's guard, a move of the room's version). The host's scripts and `SCRIPTS` are
``xattn.classroom.redis_scripts``'s."""

from __future__ import annotations

__all__ = ["NOW", "GUARD", "MOVED", "STEP_INFO", "ANSWER", "VIEW", "TOUCH", "TAKE_JOIN", "PULSE",
           "STUDENT_ANSWERS", "RESTORE", "SIGNING_KEYS"]


NOW = """local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""


# Host scripts start with the guard: the stored digest must equal ARGV[1] (else 'HOST'), and
# ARGV[2] (a step) must be one of the room's steps (else 'STEP', n_steps).
GUARD = """local g = redis.call('HMGET', KEYS[1], 'secret', 'n_steps')
if g[1] ~= ARGV[1] then return {'HOST', 0} end
if ARGV[2] ~= '' and tonumber(ARGV[2]) > tonumber(g[2]) then return {'STEP', g[2]} end
"""


# A host's move: the room's version moves, and it is being taught now (``host_at``, ms)
MOVED = ("redis.call('HINCRBY', KEYS[1], 'version', 1) local tt = redis.call('TIME') "
          "redis.call('HSET', KEYS[1], 'host_at', string.format('%d', tonumber(tt[1]) * 1000 "
          "+ math.floor(tonumber(tt[2]) / 1000))) ")


# ARGV: step, answers' key prefix, student ('' for none), levels' key prefix -> the step's
# current round (and the student's answer and level).
STEP_INFO = """local s = ARGV[1]
local r = redis.call('HMGET', KEYS[1], 'step', 'n_steps', 'r' .. s, 'p' .. s, 'closes')
if not r[1] then return {'NOROOM', 0} end
if tonumber(s) > tonumber(r[2]) then return {'STEP', r[2], r[1], r[5]} end
local q = redis.call('HGET', KEYS[1], 'q' .. s .. '.' .. r[3])
local mine, level = false, false
if ARGV[3] ~= '' then
  mine = redis.call('HGET', ARGV[2] .. s .. ':' .. r[3], ARGV[3])
  level = redis.call('HGET', ARGV[4] .. s .. ':' .. r[3], ARGV[3])
end
return {'OK', r[1], r[3], r[4], q, mine, level, r[5]}
"""


# KEYS: room, answers, counts, levels and level counts ('answer|level' -> students) of the
# round ARGV[2]; ARGV: step, round, student, value, max, level ('' for none). The answer and
# its level are written together, or neither. A homework takes any step until it closes, once
# a student ('ANSWERED' with the answer kept: another is refused; the same one is taken).
ANSWER = NOW + """local r = redis.call('HMGET', KEYS[1], 'step', 'r' .. ARGV[1], 'p' .. ARGV[1],
                           'n_answers', 'expires', 'closes')
if not r[1] then return {'NOROOM', 0} end
if r[6] then
  if now >= tonumber(r[6]) then return {'HWCLOSED', r[6], string.format('%d', now)} end
elseif r[1] ~= ARGV[1] then return {'NOTSTEP', r[1]} end
if r[2] ~= ARGV[2] then return {'STALE', r[2]} end
if r[3] ~= 'asking' then return {'CLOSED', 0} end
local t = redis.call('HGET', KEYS[1], 't' .. ARGV[1] .. '.' .. ARGV[2])
if t then
  local _, _, ends, reveal = string.find(t, '^[^|]*|(%d+)|(%d)$')
  if now >= tonumber(ends) then
    if reveal == '1' then return {'CLOSED', 0} end
    return {'TIMEUP', 0}
  end
end
local old = redis.call('HGET', KEYS[2], ARGV[3])
local level = redis.call('HGET', KEYS[4], ARGV[3]) or ''
if old == ARGV[4] and level == ARGV[6] then return {'OK', 0} end
if old and r[6] then return {'ANSWERED', old} end
if not old then
  if tonumber(r[4]) >= tonumber(ARGV[5]) then return {'FULL', r[4]} end
  redis.call('HINCRBY', KEYS[1], 'n_answers', 1)
end
if old ~= ARGV[4] then
  if old and redis.call('HINCRBY', KEYS[3], old, -1) <= 0 then redis.call('HDEL', KEYS[3], old) end
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
end
if ARGV[6] == '' then
  redis.call('HDEL', KEYS[4], ARGV[3])
else
  redis.call('HSET', KEYS[4], ARGV[3], ARGV[6])
  redis.call('PEXPIREAT', KEYS[4], r[5])
end
if old and redis.call('HINCRBY', KEYS[5], old .. '|' .. level, -1) <= 0 then
  redis.call('HDEL', KEYS[5], old .. '|' .. level)
end
redis.call('HINCRBY', KEYS[5], ARGV[4] .. '|' .. ARGV[6], 1)
redis.call('PEXPIREAT', KEYS[5], r[5])
redis.call('HINCRBY', KEYS[1], 'tally', 1)
redis.call('PEXPIREAT', KEYS[2], r[5])
redis.call('PEXPIREAT', KEYS[3], r[5])
return {'OK', 1}
"""


# KEYS: room, seen, joined; ARGV: answers' and counts' key prefixes, student or '', present ms.
VIEW = NOW + """local r = redis.call('HMGET', KEYS[1], 'step', 'n_steps', 'expires', 'version',
                                  'locked', 'confidence', 'histogram_before', 'closes')
if not r[1] then return {'NOROOM'} end
local m = redis.call('HMGET', KEYS[1], 'r' .. r[1], 'p' .. r[1])
local key = r[1] .. '.' .. m[1]
local extra = redis.call('HMGET', KEYS[1], 'q' .. key, 't' .. key)
local round = r[1] .. ':' .. m[1]
local mine = false
if ARGV[3] ~= '' then mine = redis.call('HGET', ARGV[1] .. round, ARGV[3]) end
local since = '(' .. string.format('%d', now - tonumber(ARGV[4]))
-- the answers whose student joined after the class arrived at this round
local opened = tonumber(redis.call('HGET', KEYS[1], 'o' .. key) or '0')
local late = 0
for _, student in ipairs(redis.call('HKEYS', ARGV[1] .. round)) do
  local joined = redis.call('HGET', KEYS[3], student)
  if joined and tonumber(joined) > opened then late = late + 1 end
end
return {'OK', r[1], r[2], m[2], m[1], extra[1], redis.call('HGETALL', ARGV[2] .. round),
        redis.call('ZCOUNT', KEYS[2], since, '+inf'), mine, r[3], r[4] or '0', extra[2],
        string.format('%d', now), r[5] or '0', r[6] or '0', r[7] or '0', r[8] or '', late}
"""


# KEYS: room, seen, joined; ARGV: present ms, max students, student... -> how many did not fit
# (a new student's first join is kept in joined)
TOUCH = NOW + """if redis.call('EXISTS', KEYS[1]) == 0 then return {'NOROOM', 0, 0} end
local new = {}
for i = 3, #ARGV do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then new[#new + 1] = ARGV[i] end
end
local n = redis.call('ZCARD', KEYS[2])
if #new > 0 and n + #new > tonumber(ARGV[2]) then
  n = n - redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[1]))
end
local room = math.max(0, tonumber(ARGV[2]) - n)
local left = 0
for i = 3, #ARGV do
  if redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[2], now, ARGV[i])
  elseif room > 0 then
    redis.call('ZADD', KEYS[2], now, ARGV[i])
    redis.call('HSETNX', KEYS[3], ARGV[i], string.format('%d', now))
    redis.call('HINCRBY', KEYS[1], 'tally', 1)
    room = room - 1
  else
    left = left + 1
  end
end
redis.call('PEXPIREAT', KEYS[2], redis.call('HGET', KEYS[1], 'expires'))
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('PEXPIREAT', KEYS[3], redis.call('HGET', KEYS[1], 'expires'))
end
return {'OK', left, redis.call('ZCARD', KEYS[2])}
"""


# KEYS: room, its join buckets; ARGV: client's digest, burst, ms per token -> 0 (taken) or
# the ms until one is
TAKE_JOIN = NOW + """local expires = redis.call('HGET', KEYS[1], 'expires')
if not expires then return -1 end
local burst, every = tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens = burst
local got = redis.call('HGET', KEYS[2], ARGV[1])
if got then
  local _, _, left, at = string.find(got, '^([^|]*)|(%d+)$')
  tokens = math.min(burst, tonumber(left) + (now - tonumber(at)) / every)
end
if tokens < 1 then return math.ceil((1 - tokens) * every) end
redis.call('HSET', KEYS[2], ARGV[1], string.format('%.6f|%d', tokens - 1, now))
redis.call('PEXPIREAT', KEYS[2], expires)
return 0
"""


# -> version, tally, the current round's timer, a homework's closing (ms), the last two or false
PULSE = """local r = redis.call('HMGET', KEYS[1], 'version', 'tally', 'step', 'closes')
if not r[3] then return false end
local round = redis.call('HGET', KEYS[1], 'r' .. r[3])
return {r[1] or '0', r[2] or '0', redis.call('HGET', KEYS[1], 't' .. r[3] .. '.' .. round),
        r[4] or false}
"""


# KEYS: room; ARGV: answers' and levels' key prefixes, student -> 'OK', then (step, question,
# answer, level or '') of each step whose current round the student answered
STUDENT_ANSWERS = """local n = redis.call('HGET', KEYS[1], 'n_steps')
if not n then return {'NOROOM'} end
local out = {'OK'}
for s = 1, tonumber(n) do
  local r = redis.call('HGET', KEYS[1], 'r' .. s)
  local a = redis.call('HGET', ARGV[1] .. s .. ':' .. r, ARGV[3])
  if a then
    out[#out + 1] = s
    out[#out + 1] = redis.call('HGET', KEYS[1], 'q' .. s .. '.' .. r)
    out[#out + 1] = a
    out[#out + 1] = redis.call('HGET', ARGV[2] .. s .. ':' .. r, ARGV[3]) or ''
  end
end
return out
"""


# KEYS: room, rooms, ended, homework rooms; ARGV: code, answers' and counts' key prefixes,
# expires ms, N, the levels' and level counts' key prefixes, then N field-value pairs of the
# room (made if missing), then answers as (step:round, student, text, level or ''). Nothing
# for a room its lecturer ended: {-1, 0}.
RESTORE = """local made, added, n = 0, 0, tonumber(ARGV[5])
if redis.call('EXISTS', KEYS[3]) == 1 then return {-1, 0} end
if redis.call('EXISTS', KEYS[1]) == 0 then
  local f = {}
  for i = 8, 7 + 2 * n do f[#f + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(f))
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
  if redis.call('HEXISTS', KEYS[1], 'closes') == 1 then
    redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
  end
  made = 1
end
local expires = redis.call('HGET', KEYS[1], 'expires')
for i = 8 + 2 * n, #ARGV - 3, 4 do
  local sr = ARGV[i]
  local s, r = string.match(sr, '^(%d+):(%d+)$')
  local current = redis.call('HGET', KEYS[1], 'r' .. s)
  if current and tonumber(r) <= tonumber(current) then
    if redis.call('HSETNX', ARGV[2] .. sr, ARGV[i + 1], ARGV[i + 2]) == 1 then
      redis.call('HINCRBY', ARGV[3] .. sr, ARGV[i + 2], 1)
      redis.call('PEXPIREAT', ARGV[2] .. sr, expires)
      redis.call('PEXPIREAT', ARGV[3] .. sr, expires)
      if ARGV[i + 3] ~= '' then
        redis.call('HSET', ARGV[6] .. sr, ARGV[i + 1], ARGV[i + 3])
        redis.call('PEXPIREAT', ARGV[6] .. sr, expires)
      end
      redis.call('HINCRBY', ARGV[7] .. sr, ARGV[i + 2] .. '|' .. ARGV[i + 3], 1)
      redis.call('PEXPIREAT', ARGV[7] .. sr, expires)
      added = added + 1
    end
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[1], 'n_answers', added)
  redis.call('HINCRBY', KEYS[1], 'tally', 1)
end
return {made, added}
"""


# KEYS: the first signing key, every signing key; ARGV: a first key if none, keys to keep
SIGNING_KEYS = """redis.call('SET', KEYS[1], ARGV[1], 'NX')
for i = 2, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return {redis.call('GET', KEYS[1]), redis.call('SMEMBERS', KEYS[2])}
"""
