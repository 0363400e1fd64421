"""The RateLimit-Policy and RateLimit fields on every /v1 answer.

The structured-field form of draft-ietf-httpapi-ratelimit-headers-10 (RFC 9651 lists of
items: a policy's name as an sf-string with integer parameters):

    RateLimit-Policy: "key";q=600;w=60, "address";q=3000;w=60
    RateLimit: "key";r=597;t=42, "address";r=2990;t=42

RateLimit-Policy names the limits in force (API_RATE_LIMIT per key, API_ADDRESS_RATE_LIMIT
per client address; a disabled one is absent, and with both off neither field is sent; the
refused-key limit is not listed, a client with a good key never spends it):
`q` requests per `w` seconds. RateLimit says where this client stands in each window this
request was counted in: `r` requests left, `t` seconds until the window closes. A request
the throttles never saw (a 401, a 406, an unknown path) was counted nowhere: its RateLimit
reports the address's window as it stands, without counting it (its key is unknown). A
limit the cache could not count (Redis down, the limit failing open) is absent from
RateLimit. On a 429 Retry-After names the end of the longest window that refused it, so
it is never before the `t` of a refused policy (the draft's SHOULD).

A middleware rather than each view: the Error bodies of paths no view answers, the
401s raised before any throttle, listPets' hot path and the domains API all pass here,
and the lean handler (petstore/http/lean.py) keeps it in its chain.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from petstore.api import throttles

POLICY_HEADER = "RateLimit-Policy"
LIMIT_HEADER = "RateLimit"


@functools.lru_cache(maxsize=16)
def policy_field(key_rate: str, address_rate: str) -> str | None:
    """The RateLimit-Policy value for these two settings (None: both limits are off)."""
    policies = [
        throttles.parse_rate(throttle.policy_name, rate)
        for throttle, rate in (
            (throttles.KeyThrottle, key_rate),
            (throttles.AddressThrottle, address_rate),
        )
    ]
    items = [f'"{p.name}";q={p.quota};w={p.window}' for p in policies if p is not None]
    return ", ".join(items) or None


def limit_field(counts: Iterable[throttles.Count]) -> str | None:
    """The RateLimit value for these counts (None: there are none)."""
    items = [f'"{c.policy.name}";r={c.remaining};t={c.reset}' for c in counts]
    return ", ".join(items) or None


def add_fields(request: HttpRequest, response: HttpResponseBase) -> None:
    policies = policy_field(settings.API_RATE_LIMIT, settings.API_ADDRESS_RATE_LIMIT)
    if policies is None:
        return
    counts = throttles.counts(request)
    if counts is None:  # no throttle ran: the address's window, uncounted
        peeked = throttles.AddressThrottle().peek(request)
        counts = [peeked] if peeked else []
    response[POLICY_HEADER] = policies
    limits = limit_field(counts)
    if limits is not None:
        response[LIMIT_HEADER] = limits


class RateLimitHeadersMiddleware:
    """Adds the fields to every answer of a path under /v1."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        path = request.path_info
        if path.startswith("/v1/") or path == "/v1":
            add_fields(request, response)
        return response
