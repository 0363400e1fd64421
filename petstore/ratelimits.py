"""Fixed-window counters on Redis's clock: the one rate limiter of the platform, for the
API's limits (petstore/api/throttles.py) and the webhooks' (domains/webhooks/limits.py).

A window per counter opens at its first event. One Lua script per event increments the
counter and, when the counter has no expiry yet (its first event), gives it one of the
window's length; it returns the count and the milliseconds left. One round trip, and
atomic: Redis runs a script alone, so fifty concurrent events against a limit of ten see
1..50 and exactly ten pass. The window's end is Redis's clock, never a process's, so every
web process and worker agrees on it. What fixed windows give up: a client may spend its
quota at the end of one window and again at the start of the next (twice the rate across
the boundary, at most once per window).

The counters live in REDIS_URL's server. A caller decides what a Redis that cannot be
reached means (redis.RedisError): every limit of ours fails open, because refusing every
request while Redis is down would turn a cache outage into an outage of what it protects.
"""

from __future__ import annotations

import hashlib

import redis
from django.conf import settings

from petstore.redisclients import shared_client

# KEYS[1] the counter, ARGV[1] the window in ms. A counter without an expiry is one this
# event opened (or one that lost it): it gets the whole window.
HIT = """
local used = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {used, left}
"""
# The same answer without counting.
PEEK = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local left = redis.call('PTTL', KEYS[1])
if left < 0 then left = tonumber(ARGV[1]) end
return {used, left}
"""
_SHA = {script: hashlib.sha1(script.encode()).hexdigest() for script in (HIT, PEEK)}  # noqa: S324 - Redis names scripts by SHA-1


def counted(script: str, key: str, window: int) -> tuple[int, int]:
    """The count of the counter `key` and the milliseconds left in its window of `window`
    seconds, after `script` (HIT counts one event, PEEK none): one round trip while the
    script is loaded (EVALSHA), two the first time. Raises redis.RedisError."""
    client = shared_client(settings.REDIS_URL)
    try:
        used, left = client.evalsha(_SHA[script], 1, key, window * 1000)
    except redis.exceptions.NoScriptError:  # a restarted or flushed Redis
        used, left = client.eval(script, 1, key, window * 1000)
    return int(used), int(left)


def seconds(milliseconds: int) -> int:
    """Milliseconds left as the whole seconds a Retry-After names (at least one)."""
    return max(1, -(-milliseconds // 1000))
