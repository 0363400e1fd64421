"""Rate limits on /v1: per API key and per client address, counted in the shared cache.

Both rates are settings read at each request (DRF rate syntax, e.g. "600/min";
empty turns a limit off): API_RATE_LIMIT per key, API_ADDRESS_RATE_LIMIT per
client address (petstore.http.clientaddress.client_address, so NUM_PROXIES decides which
hop of X-Forwarded-For is the client). Over a limit DRF raises Throttled, which
petstore.api.errors answers with 429, the Error body and Retry-After.

The counters live in the cache (Redis in production). When the cache cannot be
reached the limits fail open: the API keeps answering and a warning is logged,
because refusing every request while Redis is down would turn a cache outage
into an API outage.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework import throttling
from rest_framework.request import Request

from petstore.apikeys.models import ApiKey
from petstore.http.clientaddress import client_address

if TYPE_CHECKING:  # DRF imports these classes while it defines APIView
    from rest_framework.views import APIView

log = logging.getLogger(__name__)


class _FailOpen(throttling.BaseThrottle):
    """Allow the request when the cache backend raises (connection refused, timeout)."""

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as exc:  # noqa: BLE001 - any cache error: do not block the API
            log.warning(
                "Rate limit %s not applied, cache unavailable: %s",
                type(self).__name__,
                type(exc).__name__,
            )
            return True


class _SettingsRate(throttling.SimpleRateThrottle):
    """A rate read from a setting at each request (DRF syntax; empty turns it off),
    so deployments and tests can change it without a restart of the class."""

    rate_setting: str
    num_requests: int
    duration: int

    def __init__(self) -> None:  # the base class reads THROTTLE_RATES here; we read settings
        pass

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.rate = getattr(settings, self.rate_setting) or None
        num_requests, duration = self.parse_rate(self.rate)
        if num_requests is None or duration is None:  # no rate: the limit is off
            return True
        self.num_requests, self.duration = num_requests, duration
        return super().allow_request(request, view)

    def wait(self) -> float:
        # DRF gives up (None) when the history is longer than the current rate
        # allows, e.g. after the rate was lowered; the answer is still known: when
        # the num_requests-th newest request leaves the window.
        if len(self.history) >= self.num_requests:
            return max(1.0, self.history[self.num_requests - 1] + self.duration - self.now)
        return 1.0


class KeyThrottle(_FailOpen, _SettingsRate):
    """API_RATE_LIMIT requests per API key."""

    scope = "api_key"
    rate_setting = "API_RATE_LIMIT"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        # The random prefix, not the row id: ids are reused across test databases.
        return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}


class AddressThrottle(_FailOpen, _SettingsRate):
    """API_ADDRESS_RATE_LIMIT requests per client address, whichever key they carry.

    An address may hold several keys (an office, a CI fleet), so its default is a
    multiple of the per-key rate; it caps what one machine can send with many keys.
    """

    scope = "api_address"
    rate_setting = "API_ADDRESS_RATE_LIMIT"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        address = client_address(request)
        if not address:
            return None
        return self.cache_format % {"scope": self.scope, "ident": address}
