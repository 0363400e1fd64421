"""Where the data lives: PostgreSQL, and Redis for the cache (the broker: settings.celery)."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section
from petstore.settings.core import EMBEDDED_DATABASE, EMBEDDED_SOCKETS

env = Section("Data")
DATABASE_URL = (
    env.text(
        "DATABASE_URL",
        "",
        "PostgreSQL only, e.g. `postgres://user:password@db:5432/petstore`; any other scheme "
        "stops the process at start-up.",
        shown="the embedded PostgreSQL `make run` starts (database `petstore`, in `var/run`)",
        example="postgres://petstore:change-me@127.0.0.1:5432/petstore",
        secret=True,
    )
    or f"postgres://postgres@{quote(str(EMBEDDED_SOCKETS), safe='')}/{EMBEDDED_DATABASE}"
)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        # Persistent, health-checked connections: a dropped connection is
        # noticed and replaced before the next request uses it.
        conn_max_age=env.integer(
            "DB_CONN_MAX_AGE",
            60,
            "Seconds a health-checked database connection is kept; `0` closes each after "
            "its request.",
        ),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        f"DATABASE_URL must name a PostgreSQL database (postgres://...), not "
        f"{DATABASE_URL.partition(':')[0]}:; unset it to use the embedded server of `make run`"
    )
# The same backend, its health check without a round trip unless the server has written to
# the idle connection, as it does when it drops one (petstore/database/).
DATABASES["default"]["ENGINE"] = "petstore.database"
# A statement bound on the server is prepared once it has run this often on a connection
# (psycopg's default; Django's is never). Django's cursors bind on the client, which never
# prepares, so this reaches only createPet's statement (pets/api/createpath.py).
PREPARE_THRESHOLD = 5
DB_PREPARED_STATEMENTS = env.flag(
    "DB_PREPARED_STATEMENTS",
    True,
    f"createPet's statement prepared on each database connection once it has run "
    f"{PREPARE_THRESHOLD} times there; off behind a pooler in transaction mode that does not "
    "keep prepared statements (PgBouncer before 1.21, or without `max_prepared_statements`).",
)
DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
    PREPARE_THRESHOLD if DB_PREPARED_STATEMENTS else None
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Unset: the embedded server (`make run`), its database 0 the cache, 1 the Celery broker.
EMBEDDED_REDIS_SOCKET = EMBEDDED_SOCKETS / "redis.sock"
REDIS_URL_GIVEN = env.text(
    "REDIS_URL",
    "",
    "The cache (rate limits, shared state, metrics; sign-in counts live in the database), "
    "e.g. `redis://cache:6379/0`.",
    shown="the embedded Redis `make run` starts (`unix://var/run/redis.sock?db=0`)",
    example="redis://127.0.0.1:6379/0",
    secret=True,
)
REDIS_URL = REDIS_URL_GIVEN or f"unix://{EMBEDDED_REDIS_SOCKET}?db=0"
# A hung Redis then costs a call this long and the caller goes on as in an outage: rate
# limits fail open, keys are looked up in the database, a task not queued is queued again by
# the sweep. A request makes at most five such calls (key, two limits, a publish tried
# twice): a hung Redis leaves it answered within 2.5 s. A healthy Redis answers in well
# under a millisecond.
REDIS_TIMEOUT = env.number(
    "REDIS_TIMEOUT",
    0.5,
    "Seconds every Redis client (cache, broker, rate limits, API-key cache, metrics) waits to "
    "connect and for each answer; then the caller goes on as in an outage.",
)


def _sentinel(item: str) -> tuple[str, int]:
    host, _, port = item.rpartition(":")
    if not host or not port.isdigit():
        raise ImproperlyConfigured(f"REDIS_SENTINELS must be host:port items, got {item!r}")
    return host.strip("[]"), int(port)


# Redis Sentinel: the URLs keep their database and password, and their host names the primary
# as the sentinels know it (`sentinel monitor <name> ...`); every client asks the sentinels
# where that primary is, and again after a failover (petstore/redisclients.py, the broker's
# and beat's settings in settings.celery).
REDIS_SENTINELS = [
    _sentinel(item)
    for item in env.list(
        "REDIS_SENTINELS",
        "",
        "Redis Sentinel, comma-separated `host:port`: every Redis client asks these for the "
        "primary named by the host of `REDIS_URL` and `CELERY_BROKER_URL` "
        "(`redis://:password@mymaster/0`), and follows a failover. Empty: the URLs' servers.",
    )
]
REDIS_SENTINEL_PASSWORD = env.text(
    "REDIS_SENTINEL_PASSWORD",
    "",
    "The sentinels' own password (their `requirepass`), if they have one.",
    secret=True,
)
if REDIS_SENTINELS and urlsplit(REDIS_URL).scheme not in ("redis", "rediss"):
    raise ImproperlyConfigured(
        "REDIS_SENTINELS needs REDIS_URL as redis://[:password@]<primary's name>/<db>"
    )
# What every client passes the sentinels (they answer quickly or are skipped for the next).
SENTINEL_KWARGS = {
    "socket_connect_timeout": REDIS_TIMEOUT,
    "socket_timeout": REDIS_TIMEOUT,
    **({"password": REDIS_SENTINEL_PASSWORD} if REDIS_SENTINEL_PASSWORD else {}),
}
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {
            "socket_connect_timeout": REDIS_TIMEOUT,
            "socket_timeout": REDIS_TIMEOUT,
            **({"pool_class": "petstore.redisclients.SentinelPool"} if REDIS_SENTINELS else {}),
        },
    }
}
