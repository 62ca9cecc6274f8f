"""The Lua scripts of the Redis class store (``xattn.classroom.redis_store``), one per operation.

Each runs atomically on the Redis server. The keys they read and write are described in
``xattn.classroom.redis_store``; times are ms since the epoch on the server's clock. `SCRIPTS`
names each script as ``RedisStore`` registers it.
"""

from __future__ import annotations

from xattn.classroom.redis_room_scripts import (
    ANSWER,
    GUARD,
    MOVED,
    NOW,
    PULSE,
    RESTORE,
    SIGNING_KEYS,
    STEP_INFO,
    STUDENT_ANSWERS,
    TAKE_JOIN,
    TOUCH,
    VIEW,
)

__all__ = ["SCRIPTS"]

# KEYS: rooms, room, ended, homework rooms, the owner's rooms; ARGV: code, ttl ms, max rooms,
# digest, owner's digest ('' for none), prefix, untaught ms, lesson, homework open ms ('' for a
# live class), results ms, max homework rooms, rooms per owner, homework per owner, then every
# step's question
_CREATE = NOW + """redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if redis.call('EXISTS', KEYS[2], KEYS[3]) > 0 then return {'TAKEN', 0} end
if ARGV[5] ~= '' then
  -- the rooms this client holds now: those of its set whose room is still there, a live
  -- one while it is taught (its host seen within ARGV[7] ms), a homework always
  local held, homework = 0, 0
  local taught = now - tonumber(ARGV[7])
  for _, code in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
    local c = redis.call('HMGET', ARGV[6] .. 'room:{' .. code .. '}', 'step', 'closes',
                         'host_at')
    if c[1] then
      if c[2] then
        held = held + 1
        homework = homework + 1
      elseif tonumber(c[3] or '0') > taught then
        held = held + 1
      end
    else
      redis.call('ZREM', KEYS[5], code)
    end
  end
  if held >= tonumber(ARGV[12]) then return {'HELD', held} end
  if ARGV[9] ~= '' and homework >= tonumber(ARGV[13]) then return {'HWHELD', homework} end
end
if ARGV[9] ~= '' then
  local held = redis.call('ZCARD', KEYS[4])
  if held >= tonumber(ARGV[11]) then return {'HWFULL', held} end
end
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[3]) then
  -- full: replace the live room whose host was seen longest ago, ARGV[7] ms ago or more
  -- (students, answers and streams without the key never count)
  local idle = now - tonumber(ARGV[7])
  local oldest, oldest_at = nil, idle + 1
  for _, code in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local t = redis.call('HMGET', ARGV[6] .. 'room:{' .. code .. '}', 'host_at', 'closes')
    local at = tonumber(t[1] or '0')
    if not t[2] and at < oldest_at then oldest, oldest_at = code, at end
  end
  if not oldest then return {'FULL', n} end
  local room = ARGV[6] .. 'room:{' .. oldest .. '}'
  for s = 1, tonumber(redis.call('HGET', room, 'n_steps') or '0') do
    local last = tonumber(redis.call('HGET', room, 'r' .. s) or '0')
    for r = 1, last do
      redis.call('DEL', ARGV[6] .. 'ans:{' .. oldest .. '}:' .. s .. ':' .. r,
                 ARGV[6] .. 'cnt:{' .. oldest .. '}:' .. s .. ':' .. r,
                 ARGV[6] .. 'cnf:{' .. oldest .. '}:' .. s .. ':' .. r,
                 ARGV[6] .. 'cfc:{' .. oldest .. '}:' .. s .. ':' .. r)
    end
  end
  redis.call('DEL', room, ARGV[6] .. 'seen:{' .. oldest .. '}',
             ARGV[6] .. 'bkt:{' .. oldest .. '}', ARGV[6] .. 'jnd:{' .. oldest .. '}')
  -- replaced as if ended: no server process gives it back from its snapshot
  local ended = ARGV[6] .. 'ended:{' .. oldest .. '}'
  redis.call('SET', ended, '1')
  redis.call('PEXPIREAT', ended, redis.call('ZSCORE', KEYS[1], oldest))
  redis.call('ZREM', KEYS[1], oldest)
end
local expires = string.format('%d', now + tonumber(ARGV[2]))
local at = string.format('%d', now)
local f = {'secret', ARGV[4], 'expires', expires, 'step', 1, 'n_steps', #ARGV - 13,
           'n_answers', 0, 'version', 0, 'tally', 0, 'host_at', at, 'lesson', ARGV[8],
           'owner', ARGV[5], 'o1.1', at}
if ARGV[9] ~= '' then          -- a homework: open until closes, kept ARGV[10] ms after
  local closes = now + tonumber(ARGV[9])
  expires = string.format('%d', closes + tonumber(ARGV[10]))
  f[4] = expires
  f[#f + 1] = 'closes'
  f[#f + 1] = string.format('%d', closes)
  redis.call('ZADD', KEYS[4], expires, ARGV[1])
end
for i = 14, #ARGV do
  local s = tostring(i - 13)
  for _, v in ipairs({'r' .. s, 1, 'p' .. s, 'asking', 'q' .. s .. '.1', ARGV[i]}) do
    f[#f + 1] = v
  end
end
redis.call('HSET', KEYS[2], unpack(f))
redis.call('PEXPIREAT', KEYS[2], expires)
redis.call('ZADD', KEYS[1], expires, ARGV[1])
if ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[5], expires, ARGV[1])
  redis.call('PEXPIREAT', KEYS[5], redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')[2])
end
return {'OK', 1}
"""
# A device code (KEYS[2]) for ARGV[4] ms: its wrapped secret ARGV[3]; returns its expiry.
_ADD_DEVICE = NOW + GUARD + """redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
return {'OK', string.format('%d', now + tonumber(ARGV[4]))}"""
# KEYS: room, seen, ended, rooms, homework rooms, joined; ARGV: digest, code, answers', counts',
# levels' and level counts' key prefixes.
# Everything of the room deleted; the ended marker kept until the room's expiry.
_END = """local g = redis.call('HMGET', KEYS[1], 'secret', 'n_steps', 'expires')
if g[1] ~= ARGV[1] then return {'HOST', 0} end
for s = 1, tonumber(g[2]) do
  local last = tonumber(redis.call('HGET', KEYS[1], 'r' .. s) or '0')
  for r = 1, last do
    redis.call('DEL', ARGV[3] .. s .. ':' .. r, ARGV[4] .. s .. ':' .. r,
               ARGV[5] .. s .. ':' .. r, ARGV[6] .. s .. ':' .. r)
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[6])
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('SET', KEYS[3], '1')
redis.call('PEXPIREAT', KEYS[3], g[3])
return {'OK', 1}
"""
_ROTATE = GUARD + "redis.call('HSET', KEYS[1], 'secret', ARGV[3]) return {'OK', 1}"
_LOCK = GUARD + ("redis.call('HSET', KEYS[1], 'locked', ARGV[3]) " + MOVED
                  + "return {'OK', 1}")
# ARGV: digest, '', confidence, histogram_before ('1', '0', or '': as it is)
_SET_OPTIONS = GUARD + """if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'confidence', ARGV[3])
end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'histogram_before', ARGV[4]) end
""" + MOVED + "return {'OK', 1}"
# ARGV: digest, '', the language ('': none)
_SET_LANGUAGE = GUARD + ("redis.call('HSET', KEYS[1], 'language', ARGV[3]) " + MOVED
                         + "return {'OK', 1}")
# the class arrives at the step's current round now (``o<s>.<r>``, ms), if it moved
_SET_STEP = GUARD + NOW + """if redis.call('HGET', KEYS[1], 'step') ~= ARGV[2] then
  local r = redis.call('HGET', KEYS[1], 'r' .. ARGV[2])
  redis.call('HSET', KEYS[1], 'o' .. ARGV[2] .. '.' .. r, string.format('%d', now))
end
redis.call('HSET', KEYS[1], 'step', ARGV[2]) """ + MOVED + "return {'OK', 1}"
_REVEAL = GUARD + ("redis.call('HSET', KEYS[1], 'p' .. ARGV[2], 'revealed') " + MOVED
                    + "return {'OK', 1}")
_ASK_AGAIN = GUARD + """local s = ARGV[2]
local r = tonumber(redis.call('HGET', KEYS[1], 'r' .. s))
if r >= tonumber(ARGV[3]) then return {'ROUNDS', r} end
local q = ARGV[4]
if q == '' then q = redis.call('HGET', KEYS[1], 'q' .. s .. '.' .. r) end
local tt = redis.call('TIME')
redis.call('HSET', KEYS[1], 'r' .. s, r + 1, 'p' .. s, 'asking', 'q' .. s .. '.' .. (r + 1), q,
           'o' .. s .. '.' .. (r + 1),
           string.format('%d', tonumber(tt[1]) * 1000 + math.floor(tonumber(tt[2]) / 1000)))
""" + MOVED + "return {'OK', r + 1}"
# ARGV: digest, step, seconds, reveal ('1' or '0') -> the timer's end (ms, server clock)
_START_TIMER = GUARD + NOW + """local r = redis.call('HGET', KEYS[1], 'r' .. ARGV[2])
local ends = string.format('%d', now + math.floor(tonumber(ARGV[3]) * 1000))
redis.call('HSET', KEYS[1], 't' .. ARGV[2] .. '.' .. r, ARGV[3] .. '|' .. ends .. '|' .. ARGV[4])
""" + MOVED + "return {'OK', ends}"
# KEYS: a room whose host page is open; ARGV: the digest of the key its page holds. Its
# host_at is now (ms) if that key drives it.
_MARK_HOSTS = NOW + """if redis.call('HGET', KEYS[1], 'secret') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'host_at', string.format('%d', now))
end
return 1
"""
# KEYS: room, seen, rooms, homework rooms; ARGV: digest, '', open ms from now, results ms, code,
# answers', counts', levels' and level counts' key prefixes -> the closing time (ms). Every
# key of the room lives until its new expiry.
_SET_CLOSING = GUARD + NOW + """if not redis.call('HGET', KEYS[1], 'closes') then
  return {'LIVE', 0}
end
local closes = now + tonumber(ARGV[3])
local expires = string.format('%d', closes + tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'closes', string.format('%d', closes), 'expires', expires)
""" + MOVED + """redis.call('PEXPIREAT', KEYS[1], expires)
redis.call('PEXPIREAT', KEYS[2], expires)
for s = 1, tonumber(g[2]) do
  local last = tonumber(redis.call('HGET', KEYS[1], 'r' .. s) or '0')
  for r = 1, last do
    for i = 6, 9 do redis.call('PEXPIREAT', ARGV[i] .. s .. ':' .. r, expires) end
  end
end
redis.call('ZADD', KEYS[3], expires, ARGV[5])
redis.call('ZADD', KEYS[4], expires, ARGV[5])
return {'OK', string.format('%d', closes)}
"""


SCRIPTS = {"create": _CREATE, "add_device": _ADD_DEVICE, "rotate": _ROTATE, "end": _END,
           "lock": _LOCK, "set_options": _SET_OPTIONS,
           "set_language": _SET_LANGUAGE, "set_step": _SET_STEP, "reveal": _REVEAL,
           "ask_again": _ASK_AGAIN, "step_info": STEP_INFO, "answer": ANSWER, "view": VIEW,
           "start_timer": _START_TIMER, "touch": TOUCH, "pulse": PULSE,
           "mark_hosts": _MARK_HOSTS, "take_join": TAKE_JOIN, "set_closing": _SET_CLOSING,
           "student_answers": STUDENT_ANSWERS,
           "signing_keys": SIGNING_KEYS, "restore": RESTORE}
