"""GET /metrics: every family, on any Host, for whoever holds METRICS_TOKEN.

A scraper asks each web process by its address (`Host: 10.1.2.3:8000`), which neither
the host routing nor ALLOWED_HOSTS accept, so the endpoint answers before them, like
the probes (petstore/http/health.py). It answers only `Authorization: Bearer
<METRICS_TOKEN>` (compared in constant time). Without METRICS_TOKEN, or without the
right token, the request goes on as if the endpoint did not exist: the dashboard's host
answers 404, a tenant's host its own page (whose /metrics is the tenant's), an address
400. Nothing tells a prober that metrics are there, or that a token was close; an
operator whose scrape says 404 checks the token.

The families: the counters and histograms of every process (`store`), then the
collectors registered here (gauges read from the database and the broker at scrape time).
A scrape that cannot read one of them fails (503), so a missing value never looks like
a zero or a reset.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterator
from typing import Protocol

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import Metric

from petstore.metrics import store

log = logging.getLogger(__name__)

METRICS_PATH = "/metrics"


class Collector(Protocol):
    def collect(self) -> Iterator[Metric]: ...


COLLECTORS: list[Collector] = []


def register(collector: Collector) -> None:
    """Add a collector of values computed at scrape time (an app's ready() calls this)."""
    if all(type(known) is not type(collector) for known in COLLECTORS):
        COLLECTORS.append(collector)


class Exposition:
    def collect(self) -> Iterator[Metric]:
        yield from store.stored_families()
        for collector in COLLECTORS:
            yield from collector.collect()


def authorized(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    if not token or request.method not in ("GET", "HEAD"):
        return False
    given = request.META.get("HTTP_AUTHORIZATION", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def metrics(request: HttpRequest) -> HttpResponse:
    try:
        body = generate_latest(Exposition())
    except Exception:
        log.exception("Could not gather the metrics")
        return HttpResponse(
            "metrics unavailable\n", status=503, content_type="text/plain; charset=utf-8"
        )
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


class MetricsEndpointMiddleware:
    """Before the host routing and ALLOWED_HOSTS, after the request id."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.path_info == METRICS_PATH and authorized(request):
            return metrics(request)
        return self.get_response(request)
