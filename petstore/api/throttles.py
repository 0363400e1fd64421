"""Rate limits on /v1: per API key and per client address, and refused keys per client
address, counted in Redis.

The rates are settings read at each request (DRF rate syntax, e.g. "600/min";
empty turns a limit off): API_RATE_LIMIT per key, API_ADDRESS_RATE_LIMIT per
client address (petstore.http.clientaddress.client_address, so NUM_PROXIES decides which
hop of X-Forwarded-For is the client), API_FAILED_KEY_RATE_LIMIT refused keys per client
address (FailedKeyThrottle, asked by the authenticator rather than by the views). Over a
limit DRF raises Throttled, which petstore.api.errors answers with 429, the Error body and
Retry-After; every /v1 answer says where its client stands (petstore.api.ratelimitheaders).

Counting: the platform's one fixed-window counter on Redis's clock (petstore/ratelimits.py),
one round trip per limit and request, atomic, so fifty concurrent requests against a limit
of ten see exactly ten pass. (DRF's own throttles read a list of timestamps, append and
write it back: two round trips with a gap between them in which concurrent requests
overwrote each other's updates, and 23-31 of 50 passed a limit of 10.) A refused request is
counted too: it changes nothing, the window closes when it would have.

The counters live in Redis (the default cache's server). When it cannot be reached
the limits fail open: the API keeps answering and a warning is logged, because
refusing every request while Redis is down would turn a cache outage into an API
outage.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache as default_cache
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from rest_framework import throttling
from rest_framework.request import Request

from petstore import ratelimits
from petstore.api.exceptions import KeysRefused
from petstore.apikeys.models import ApiKey
from petstore.http.clientaddress import client_address

if TYPE_CHECKING:  # DRF imports these classes while it defines APIView
    from rest_framework.views import APIView

log = logging.getLogger(__name__)

# The rate syntax's periods, as DRF reads them (the first letter: "min", "m" and "minute").
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

# Where the counts of a request are kept: its WSGI environ (`request.META`), the one object
# Django's request and DRF's (which hands META through) share.
COUNTS_KEY = "petstore.ratelimit_counts"


@dataclass(frozen=True, slots=True)
class Policy:
    """A limit in force: `quota` requests per `window` seconds, named as the
    RateLimit-Policy field names it ("key", "address")."""

    name: str
    quota: int
    window: int


@dataclass(frozen=True, slots=True)
class Count:
    """Where one client stands in its current window of a policy."""

    policy: Policy
    used: int  # requests counted in this window, the current one included when counted
    reset: int  # seconds until the window closes and the quota is whole again

    @property
    def remaining(self) -> int:
        return max(0, self.policy.quota - self.used)

    @property
    def allowed(self) -> bool:
        return self.used <= self.policy.quota


@functools.lru_cache(maxsize=32)
def parse_rate(name: str, rate: str) -> Policy | None:
    """`rate` in DRF's syntax ("600/min", "10/s"), None when empty (the limit is off)."""
    if not rate:
        return None
    number, _, period = rate.partition("/")
    seconds = _PERIODS.get(period[:1])
    if not number.isdigit() or seconds is None:
        raise ImproperlyConfigured(f"A rate limit is '<number>/<s|min|h|d>', not {rate!r}")
    return Policy(name, int(number), seconds)


def _run(cache: Any, script: str, key: str, window: int) -> tuple[int, int]:
    """The counter `key`, named as the cache names its keys (so `cache.get` reads it), after
    `script` (ratelimits.HIT or PEEK): its count and the milliseconds left."""
    return ratelimits.counted(script, cache.make_and_validate_key(key), window)


def counter_key(policy: Policy, ident: str) -> str:
    """The counter of `ident` (a key's prefix, an address) under `policy`. The window is
    part of the name, so a changed window starts a fresh count."""
    return f"ratelimit:{policy.name}:{policy.window}:{ident}"


def counts(request: HttpRequest | Request) -> list[Count] | None:
    """The counts this request was given by the throttles, None when none ran."""
    counted: list[Count] | None = request.META.get(COUNTS_KEY)
    return counted


class _Limit(throttling.BaseThrottle):
    """One policy: its rate from a setting at each request, so deployments and tests can
    change it without a restart; its counter by `ident`."""

    policy_name: str
    rate_setting: str
    cache = default_cache
    count: Count | None = None

    def policy(self) -> Policy | None:
        return parse_rate(self.policy_name, getattr(settings, self.rate_setting))

    def ident(self, request: HttpRequest | Request) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: HttpRequest | Request, view: APIView | None) -> bool:
        # Each limit of this request adds its count to one list.
        recorded = request.META.setdefault(COUNTS_KEY, [])
        policy = self.policy()
        ident = self.ident(request) if policy else None
        if policy is None or ident is None:
            return True
        try:
            used, left = _run(self.cache, ratelimits.HIT, counter_key(policy, ident), policy.window)
        except Exception as exc:  # noqa: BLE001 - any cache error: do not block the API
            log.warning(
                "Rate limit %s not applied, cache unavailable: %s",
                type(self).__name__,
                type(exc).__name__,
            )
            return True
        self.count = Count(policy, used, ratelimits.seconds(left))
        recorded.append(self.count)
        return self.count.allowed

    def peek(self, request: HttpRequest | Request) -> Count | None:
        """Where this request's client stands, without counting it; None when the limit
        is off, the client unknown, or the cache unavailable."""
        policy = self.policy()
        ident = self.ident(request) if policy else None
        if policy is None or ident is None:
            return None
        try:
            used, left = _run(
                self.cache, ratelimits.PEEK, counter_key(policy, ident), policy.window
            )
        except Exception:  # noqa: BLE001 - the answer goes out without the field
            return None
        return Count(policy, used, ratelimits.seconds(left))

    def wait(self) -> float:
        # The window's end, which Retry-After names (never before RateLimit's reset).
        return float(self.count.reset) if self.count else 1.0


class KeyThrottle(_Limit):
    """API_RATE_LIMIT requests per API key."""

    policy_name = "key"
    rate_setting = "API_RATE_LIMIT"

    def ident(self, request: HttpRequest | Request) -> str | None:
        auth = getattr(request, "auth", None)
        # The random prefix, not the row id: ids are reused across test databases.
        return auth.prefix if isinstance(auth, ApiKey) else None


class AddressThrottle(_Limit):
    """API_ADDRESS_RATE_LIMIT requests per client address, whichever key they carry.

    An address may hold several keys (an office, a CI fleet), so its default is a
    multiple of the per-key rate; it caps what one machine can send with many keys.
    """

    policy_name = "address"
    rate_setting = "API_ADDRESS_RATE_LIMIT"

    def ident(self, request: HttpRequest | Request) -> str | None:
        return client_address(request) or None


class FailedKeyThrottle(_Limit):
    """API_FAILED_KEY_RATE_LIMIT refused bearer keys per client address.

    Not one of the view's throttles: the authenticator asks it before a key leaves the
    process for its lookup (`check`) and counts each key it refuses (`record`), so an
    address past its quota is answered 429 without a cache read or a query. Only refusals
    count; a request with a good key costs the counter nothing when its key is kept in the
    process (keycache), one read otherwise. Concurrent refusals from one address may pass
    the quota by the requests in flight between a check and its record. Fails open, as the
    other limits do. Not listed in RateLimit-Policy: a well-behaved client never spends it.
    """

    policy_name = "failed-key"
    rate_setting = "API_FAILED_KEY_RATE_LIMIT"

    def ident(self, request: HttpRequest | Request) -> str | None:
        return client_address(request) or None

    def check(self, request: HttpRequest | Request) -> None:
        """Raise KeysRefused when this address has no refusal left in its window."""
        count = self.peek(request)
        if count is not None and count.used >= count.policy.quota:
            raise KeysRefused(wait=count.reset)

    def record(self, request: HttpRequest | Request) -> None:
        """Count one refused key against this address."""
        policy = self.policy()
        ident = self.ident(request) if policy else None
        if policy is None or ident is None:
            return
        try:
            _run(self.cache, ratelimits.HIT, counter_key(policy, ident), policy.window)
        except Exception as exc:  # noqa: BLE001 - any cache error: do not block the API
            log.warning("Refused keys not counted, cache unavailable: %s", type(exc).__name__)
