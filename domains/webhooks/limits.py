"""What one tenant may ask of the webhooks at once, and per hour or minute: counters in
Redis, so every web process and worker thread sees the same count (no model, no row lock).

- `in_flight(host=..., project_id=...)`: a slot for one attempt, held while it runs, at most
  WEBHOOKS_IN_FLIGHT_PER_HOST toward one host name and WEBHOOKS_IN_FLIGHT_PER_PROJECT for one
  project. A slot is a member of a sorted set scored with its start; a slot older than
  SLOT_LEASE (a worker that died mid-attempt) no longer counts. Taking both slots is one
  Lua script, so two workers never both take the last one.
- `refused_create_*`: the URLs refused at create (an address refused, a name that does not
  resolve or whose name servers do not answer) per project per hour.
- `redeliver_allowed`: Redelivers per project per minute.

The hour and the minute are the platform's one fixed-window counter on Redis's clock
(petstore/ratelimits.py), a window opening at the project's first event: at a window's edge
a project may get up to twice the number in a short while, which is still a bound. When
Redis cannot be reached, the limits are not applied (logged): they protect the other
tenants' latency, and the database stays the record of every delivery.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import redis
from django.conf import settings

from petstore import ratelimits
from petstore.redisclients import shared_client

log = logging.getLogger(__name__)

PREFIX = "webhooks:"
# An attempt is bounded by WEBHOOKS_TIMEOUT; a slot older than this was left by a worker
# that died, and no longer counts.
SLOT_LEASE = 60.0
# How soon an attempt refused a slot is due again (not counted as an attempt).
BUSY_RETRY = timedelta(seconds=5)

# KEYS: the host's set, the project's set. ARGV: now, member, lease, host cap, project cap.
_TAKE = """
local now, lease = tonumber(ARGV[1]), tonumber(ARGV[3])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - lease)
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then return 0 end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('EXPIRE', key, math.ceil(lease))
end
return 1
"""


def _redis() -> redis.Redis:
    return shared_client(settings.REDIS_URL)


def _slot_keys(host: str, project_id: int) -> list[str]:
    return [f"{PREFIX}host:{host}", f"{PREFIX}project:{project_id}"]


@contextmanager
def in_flight(*, host: str, project_id: int) -> Iterator[bool]:
    """True, holding a slot for an attempt toward `host` for the project until the block
    ends; False when either cap is reached (nothing held)."""
    keys, member = _slot_keys(host, project_id), uuid.uuid4().hex
    caps = (settings.WEBHOOKS_IN_FLIGHT_PER_HOST, settings.WEBHOOKS_IN_FLIGHT_PER_PROJECT)
    try:
        taken = bool(_redis().eval(_TAKE, 2, *keys, time.time(), member, SLOT_LEASE, *caps))
    except redis.RedisError as exc:
        log.warning("webhook in-flight cap not applied, Redis unavailable: %s", exc)
        yield True
        return
    try:
        yield taken
    finally:
        if taken:
            try:
                pipe = _redis().pipeline()
                for key in keys:
                    pipe.zrem(key, member)
                pipe.execute()
            except redis.RedisError as exc:  # the lease frees it
                log.warning("webhook in-flight slot not released: %s", exc)


def in_flight_now(*, host: str, project_id: int) -> tuple[int, int]:
    """Attempts in flight toward the host and for the project (stale slots included)."""
    keys = _slot_keys(host, project_id)
    return int(_redis().zcard(keys[0])), int(_redis().zcard(keys[1]))


def _counted(script: str, kind: str, project_id: int, window: int) -> tuple[int, int]:
    """The project's count of `kind` in its current window, and the seconds left in it;
    (0, window) when Redis cannot be reached."""
    try:
        used, left = ratelimits.counted(script, f"{PREFIX}{kind}:{project_id}", window)
    except redis.RedisError as exc:
        log.warning("webhook limit not applied, Redis unavailable: %s", exc)
        return 0, window
    return used, ratelimits.seconds(left)


def refused_creates(project_id: int) -> tuple[int, int]:
    """URLs refused at create for the project this hour, and the seconds left in it."""
    return _counted(ratelimits.PEEK, "refused", project_id, 3600)


def refused_create_count(project_id: int) -> None:
    _counted(ratelimits.HIT, "refused", project_id, 3600)


def redeliver_allowed(project_id: int) -> tuple[bool, int]:
    """Count one Redeliver of the project: whether this minute allows it, the seconds left."""
    used, left = _counted(ratelimits.HIT, "redeliver", project_id, 60)
    return used <= settings.WEBHOOKS_REDELIVER_PER_MINUTE, left


def clear() -> None:
    """Forget every counter and slot (tests)."""
    client = _redis()
    for key in client.scan_iter(match=f"{PREFIX}*", count=500):
        client.delete(key)
