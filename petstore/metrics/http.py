"""petstore_http_requests_total{route, status} and
petstore_http_request_duration_seconds{route}: every answer of the web processes.

`observe(route, status, seconds)` is the one way to count a request: the middleware calls
it, and so must any fast path that answers before the middleware (a WSGI-level shortcut).
The route is the URL pattern that answered (`v1/pets/<int:pet_id>`), never the raw path,
which would make a series per pet; answers given before or without URL routing (probes,
the metrics endpoint, tenant pages served by host, a refused Host, a path no pattern
matches) have a fixed name. The time has the route alone: by status too would multiply
the histogram's dozen series by every status a route gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase
from prometheus_client import Counter, Histogram

from petstore.metrics import store

REQUESTS = store.counter(
    "petstore_http_requests_total",
    "HTTP answers of the web processes, by URL pattern and status code.",
    ["route", "status"],
)
# The API answers in milliseconds; the tail up to the web server's timeout. 0.5 s is the
# latency objective's bound (deploy/prometheus-alerts.yml): it must stay a boundary.
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
DURATION = store.histogram(
    "petstore_http_request_duration_seconds",
    "Time from the request reaching the middleware to its answer, by URL pattern.",
    buckets=DURATION_BUCKETS,
    labelnames=["route"],
)
# Answers given without URL routing, by path; anything else unrouted is OTHER.
UNROUTED = {"/healthz": "healthz", "/readyz": "readyz", "/metrics": "metrics"}
OTHER = "other"

# (route, status) -> its series, route -> its histogram: one dict lookup per request
# instead of labels()' own argument handling and lock.
_series: dict[tuple[str, int], Counter] = {}
_durations: dict[str, Histogram] = {}


def observe(route: str, status: int, seconds: float) -> None:
    """Count one answer and its time: two dict lookups, an increment and an observation
    (docs/decisions/metrics.md has what it costs)."""
    series = _series.get((route, status))
    if series is None:
        series = _series.setdefault(
            (route, status), REQUESTS.labels(route=route, status=str(status))
        )
    series.inc()
    duration = _durations.get(route)
    if duration is None:
        duration = _durations.setdefault(route, DURATION.labels(route=route))
    duration.observe(seconds)


def route_of(request: HttpRequest) -> str:
    match = request.resolver_match
    if match is not None:
        return match.route or match.view_name
    return UNROUTED.get(request.path_info, OTHER)


class RequestMetricsMiddleware:
    """Second in MIDDLEWARE (after the forwarded headers, which never answer), so it counts
    every answer, whichever middleware gave it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
        observe(route_of(request), response.status_code, time.perf_counter() - started)
        return response
