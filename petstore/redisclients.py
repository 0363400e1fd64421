"""Every Redis client of ours, with connect and read timeouts (`REDIS_TIMEOUT`).

A Redis that is hung (paused, swapping, a saturated network) accepts connections and
answers nothing; a client without timeouts waits for it for ever, and a web request or a
task with it. Each client here fails within `REDIS_TIMEOUT` instead, and its caller treats
that as the outage it is: the rate limits fail open, API keys are looked up in the database,
metrics stay in the process until Redis is back. The Django cache (`CACHES`) and the Celery
broker (`CELERY_BROKER_TRANSPORT_OPTIONS`) get the same timeouts in settings.
`tests/petstore/test_redis_clients.py` fails on a client made anywhere else.

Under Redis Sentinel (`REDIS_SENTINELS`) a URL's host names the primary as the sentinels know
it: each pool here (and the Django cache's, `SentinelPool`) asks the sentinels where it is
when it connects, and again after a connection fails or the old primary answers as a replica
(redis-py's sentinel-managed connections), so a failover costs the calls made during it.
"""

from __future__ import annotations

import functools
from typing import Any

import redis
from django.conf import settings
from redis.connection import parse_url
from redis.sentinel import Sentinel, SentinelConnectionPool


def redis_client(url: str, *, read_timeout: float | None = None) -> redis.Redis:
    """A client of the Redis at `url`, with a pool of its own. `read_timeout` for a caller
    whose command itself waits (a blocking pop, a subscription's silence), longer than
    REDIS_TIMEOUT; connecting never waits longer than REDIS_TIMEOUT."""
    timeouts = {
        "socket_connect_timeout": settings.REDIS_TIMEOUT,
        "socket_timeout": settings.REDIS_TIMEOUT if read_timeout is None else read_timeout,
    }
    if settings.REDIS_SENTINELS:
        return redis.Redis(connection_pool=SentinelPool.from_url(url, **timeouts))
    return redis.Redis.from_url(url, **timeouts)


class SentinelPool(SentinelConnectionPool):
    """The connections to the primary that `url`'s host names, found by REDIS_SENTINELS. The
    Django cache's `pool_class` under Sentinel (settings.data), so it has `from_url`."""

    @classmethod
    def from_url(cls, url: str, **options: Any) -> SentinelPool:
        params = parse_url(url)
        primary = params.pop("host")
        params.pop("port", None)
        sentinels = Sentinel(settings.REDIS_SENTINELS, sentinel_kwargs=settings.SENTINEL_KWARGS)
        return cls(primary, sentinels, **params, **options)


def shared_client(url: str) -> redis.Redis:
    """The one client of the Redis at `url` that every caller in this process shares (the
    rate limits, the webhooks' slots), its pool kept for the process's life."""
    return _shared(url, settings.REDIS_TIMEOUT)


@functools.lru_cache(maxsize=8)
def _shared(url: str, timeout: float) -> redis.Redis:
    return redis_client(url)
