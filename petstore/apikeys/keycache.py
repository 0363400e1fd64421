"""The API-key lookup: in this process, else the shared cache, else one query.

Every /v1 request authenticates, and a network round trip (PostgreSQL or Redis)
costs as much as the rest of a small request (docs/decisions/performance.md has
the numbers). So a verified key's row is kept at three levels:

1. In this process (`_Local`), for LOCAL_TTL seconds, only while this process
   is subscribed to the invalidation channel in Redis.
2. In the shared cache (Redis in production) under its prefix, ENTRY_TTL s.
3. The database: one query by the key's hash, active key of an active user.

Each level answers for the whole key (prefix and hash), so a wrong secret costs what an
unknown prefix costs (`lookup`).

Invalidation is explicit and synchronous. `forget(prefix)`:
- replaces the shared entry with a STALE marker. A STALE entry is never
  trusted, and the cache is refilled only with `add` (set-if-absent), so a
  request that read the row just before a revocation cannot put it back;
- publishes the prefix on the channel and waits until every subscribed
  process has dropped its copy and acknowledged (ACK_TIMEOUT at most).
  A process records a row only if no invalidation arrived while it was
  fetching it (a generation counter), and keeps nothing while unsubscribed.
Inside a transaction `forget` acts again after the commit.
`services.api_key_revoke` calls it before its UPDATE: when it returns, no
process accepts the key. A user saved or deleted forgets all their keys, a
deleted key forgets itself (receivers in apps.py). The TTLs bound what a write
bypassing all this (raw SQL, a bulk `QuerySet.update` of users) or a lost
subscriber connection can leave behind.

If Redis is down, lookups use the database, and `forget` raises rather than
report a revocation it cannot guarantee.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Model

from petstore.apikeys.models import ApiKey
from petstore.redisclients import redis_client

log = logging.getLogger(__name__)

ENTRY_TTL = 60  # seconds, shared cache
LOCAL_TTL = 60  # seconds, in this process
ACK_TIMEOUT = 2.0  # seconds a revocation waits for each process's acknowledgement
PING_EVERY = 5.0  # the subscriber pings Redis this often...
DEAD_AFTER = 12.0  # ...and reconnects (dropping its copies) after this long without a word
STALE = "stale"
# This prefix and the channel's (`_channel`) were named when the model was in the pets
# app, and are kept: processes of two releases share them during a deploy.
_PREFIX = "pets:apikey:v1:"


@dataclass(frozen=True)
class KeyRow:
    """What authentication needs of a key and its (active) user."""

    key_id: int
    key_hash: str
    user_id: int
    username: str
    # Compatibility shim (drop in 1.3.0): defaults, so an entry cached by release 1.1.0's
    # processes (which lacks them) reads as one to fetch again, not as a key with no scopes.
    scopes: tuple[str, ...] | None = None
    expires_at: datetime | None = None

    def api_key(self, prefix: str) -> ApiKey:
        """An ApiKey with its user attached, built without a query.

        Only these fields are loaded; any other one is fetched on first access,
        as with `.only()`.
        """
        user_model = get_user_model()
        user = user_model.from_db(
            DEFAULT_DB_ALIAS, ["id", user_model.USERNAME_FIELD, "is_active"],
            [self.user_id, self.username, True],
        )  # fmt: skip
        key = ApiKey.from_db(
            DEFAULT_DB_ALIAS, ["id", "user_id", "prefix", "key_hash", "scopes", "expires_at"],
            [self.key_id, self.user_id, prefix, self.key_hash, list(self.scopes or ()),
             self.expires_at],
        )  # fmt: skip
        key.user = user
        return key


def _cache_key(prefix: str) -> str:
    return _PREFIX + prefix


def _channel() -> str:
    # Scoped by database: the processes serving the same keys, not other test runs.
    return f"pets:apikey:forget:{settings.DATABASES['default']['NAME']}"


def lookup(
    prefix: str, key_hash: str, *, before_leaving: Callable[[], None] | None = None
) -> ApiKey | None:
    """The active key with this prefix and hash (its user attached), or None.

    Every level answers for the whole key, never for its prefix alone: a row kept under
    the prefix whose hash differs is a miss there, like no row, and the database is
    asked by hash. So a real prefix with a wrong secret and an unknown prefix take the
    same path and cost the same: one shared-cache read, one query (on an index of
    hashes, where both miss), nothing written.

    `before_leaving` runs once before the lookup asks anything outside this process (the
    shared cache, the database), and may raise to stop it there: the API's refused-key
    limit, which a key kept here (verified within LOCAL_TTL) does not wait for.

    A key kept in this process is the same instance for every request it serves:
    treat it, and its user, as read-only.
    """
    local = _local()
    generation = None
    if local is not None and local.listening:
        key = local.get(prefix)
        if key is not None and hmac.compare_digest(key.key_hash, key_hash):
            return key
        generation = local.generation
    if before_leaving is not None:
        before_leaving()
    row = _shared_lookup(prefix, key_hash)
    if row is None:
        return None
    key = row.api_key(prefix)
    if local is not None and generation is not None:
        local.put(prefix, key, generation)
    return key


def forget(*prefixes: str) -> None:
    """Stop trusting any copy of these keys' rows, now and after the current commit."""
    if not prefixes:
        return
    _forget_now(prefixes)
    if transaction.get_connection().in_atomic_block:
        # Again after the commit: a request that read the row before it must not keep it.
        # (Outside a transaction the write has committed already: once is enough.)
        transaction.on_commit(lambda: _forget_now(prefixes))


# --- Shared cache and database ------------------------------------------------


def _from_database(key_hash: str) -> KeyRow | None:
    """One query: the active key with this hash, if its user is active."""
    values = (
        ApiKey.objects.active()
        .filter(key_hash=key_hash, user__is_active=True)
        .values_list(
            "id", "key_hash", "user_id", f"user__{get_user_model().USERNAME_FIELD}", "scopes",
            "expires_at",
        )
        .first()
    )  # fmt: skip
    if not values:
        return None
    key_id, found_hash, user_id, username, scopes, expires_at = values
    return KeyRow(key_id, found_hash, user_id, username, tuple(scopes), expires_at)


def _shared_lookup(prefix: str, key_hash: str) -> KeyRow | None:
    cache_key = _cache_key(prefix)
    try:
        entry = cache.get(cache_key)
    except Exception as exc:  # noqa: BLE001 - a cache outage must not lock everyone out
        log.warning("API key cache unavailable, using the database: %s", type(exc).__name__)
        return _from_database(key_hash)
    if (
        isinstance(entry, KeyRow)
        and entry.scopes is not None
        and hmac.compare_digest(entry.key_hash, key_hash)
    ):
        return entry
    row = _from_database(key_hash)
    if row is not None and entry is None:
        # Never overwrites a STALE marker. A cache error only costs the next request a query.
        with contextlib.suppress(Exception):
            cache.add(cache_key, row, ENTRY_TTL)
    return row


def _forget_now(prefixes: tuple[str, ...]) -> None:
    cache.set_many({_cache_key(prefix): STALE for prefix in prefixes}, ENTRY_TTL)
    # This process's copies, if it keeps any: forgetting starts no subscriber (a
    # `revokeapikey` process only publishes).
    if _state is not None and _state_pid == os.getpid():
        _state.evict(prefixes)
    _broadcast(prefixes)


# --- This process's copies, and the channel that invalidates them ---------------


def _broadcast(prefixes: tuple[str, ...]) -> None:
    """Publish the prefixes and wait until every subscribed process has dropped them."""
    client = redis_client(settings.REDIS_URL, read_timeout=ACK_TIMEOUT + 3)
    try:
        ack = f"{_channel()}:ack:{uuid.uuid4().hex}"
        receivers = client.publish(_channel(), json.dumps({"prefixes": prefixes, "ack": ack}))
        for _ in range(receivers):
            if client.blpop([ack], timeout=ACK_TIMEOUT) is None:
                # A subscriber that is this slow is stuck; its copies expire in LOCAL_TTL.
                log.warning("A process did not confirm an API key invalidation in time")
                break
        client.delete(ack)
    finally:
        client.close()


class _Local:
    """Verified rows kept in this process while its subscriber is connected."""

    def __init__(self, redis_url: str, channel: str) -> None:
        self.entries: dict[str, tuple[float, ApiKey]] = {}
        self.generation = 0  # bumped by every invalidation and (re)connection
        self.listening = False
        self.lock = threading.Lock()
        self.redis_url, self.channel = redis_url, channel
        threading.Thread(target=self._run, name="apikeys-keycache", daemon=True).start()

    def get(self, prefix: str) -> ApiKey | None:
        hit = self.entries.get(prefix)
        return hit[1] if hit is not None and hit[0] > time.monotonic() else None

    def put(self, prefix: str, key: ApiKey, generation: int) -> None:
        with self.lock:
            if self.listening and generation == self.generation:
                self.entries[prefix] = (time.monotonic() + LOCAL_TTL, key)

    def evict(self, prefixes: Iterable[str]) -> None:
        with self.lock:
            self.generation += 1
            for prefix in prefixes:
                self.entries.pop(prefix, None)

    def _reset(self, *, listening: bool) -> None:
        with self.lock:
            self.generation += 1
            self.entries.clear()
            self.listening = listening

    def _run(self) -> None:
        while True:
            try:
                self._listen()
            except Exception as exc:  # noqa: BLE001 - reconnect whatever went wrong
                log.warning("API key invalidation channel lost: %s", type(exc).__name__)
            self._reset(listening=False)
            time.sleep(1)

    def _listen(self) -> None:
        client = redis_client(self.redis_url, read_timeout=DEAD_AFTER)
        pubsub = client.pubsub()
        pubsub.subscribe(self.channel)
        heard = next_ping = time.monotonic()
        while True:
            message = pubsub.get_message(timeout=1.0)
            now = time.monotonic()
            if message is not None:
                heard = now
                if message["type"] == "subscribe":
                    self._reset(listening=True)  # from now on no invalidation is missed
                elif message["type"] == "message":
                    data = json.loads(message["data"])
                    self.evict(data["prefixes"])
                    client.rpush(data["ack"], 1)
                    client.expire(data["ack"], 60)
            if now >= next_ping:
                pubsub.ping()
                next_ping = now + PING_EVERY
            if now - heard > DEAD_AFTER:
                raise redis.ConnectionError("no answer from Redis")


_state: _Local | None = None
_state_pid: int | None = None
_state_lock = threading.Lock()


def _local() -> _Local | None:
    """This process's copies (started by its first lookup, again after a fork)."""
    global _state, _state_pid
    if _state_pid != os.getpid():
        with _state_lock:
            if _state_pid != os.getpid():
                _state, _state_pid = _Local(settings.REDIS_URL, _channel()), os.getpid()
    return _state


# --- Receivers (connected in apps.py) ---------------------------------------------


def forget_user_keys(
    sender: type[Model],
    instance: Model,
    created: bool = False,
    update_fields: frozenset[str] | None = None,
    **kwargs: Any,
) -> None:
    """A user was saved (deactivated, renamed, ...). A new user has no keys, and a
    sign-in (which saves only last_login) changes nothing a key lookup reads."""
    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return
    prefixes = ApiKey.objects.filter(user_id=instance.pk).values_list("prefix", flat=True)
    try:
        forget(*prefixes)
    except redis.RedisError as exc:
        # The user's save has happened; copies of their keys expire within ENTRY_TTL.
        log.warning("Could not invalidate the API keys of user %s: %s", instance.pk, exc)


def forget_key(sender: type[ApiKey], instance: ApiKey, **kwargs: Any) -> None:
    """A key was deleted (the admin cannot; a user's deletion cascades)."""
    forget(instance.prefix)
