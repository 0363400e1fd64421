"""The custom domains' families: what their checks, certificates, CA and edge are doing.

Counters and histograms are counted where it happens, by one line each in the services,
the ACME client and the edge's endpoint; gauges (`DomainCollector`) are read from the
database at scrape time, so they are right whichever process answers. Registered with
the endpoint by the app's ready() (petstore/metrics/endpoint.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from functools import wraps

from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from domains.choices import State
from domains.models import Domain
from petstore.metrics import store

CHECKS = store.counter(
    "petstore_domain_checks_total",
    "DNS checks recorded, by outcome (domains.choices.CheckCode).",
    ["code"],
)
VERIFY_TO_ACTIVE = store.histogram(
    "petstore_verify_to_active_seconds",
    "From a domain's passing check to its certificate stored (the domain active).",
    buckets=(1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600),
)
RENEWALS_FAILED = store.counter(
    "petstore_certificate_renewals_failed_total",
    "Certificate renewals that could not be done (DNS not passing, CAA, the CA refused).",
)
ACME_ERRORS = store.counter(
    "petstore_acme_errors_total",
    "Errors from the ACME certificate authority, by type (its RFC 8555 error type, "
    "`refused`, `unreachable`).",
    ["type"],
)
EDGE_LOOKUPS = store.counter(
    "petstore_edge_certificate_lookups_total",
    "The edge's certificate lookups (one a TLS handshake), by result.",
    ["result"],
)
EDGE_LOOKUP_SECONDS = store.histogram(
    "petstore_edge_certificate_lookup_seconds",
    "How long the edge's certificate endpoint took to answer a handshake's lookup.",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
# The days within which an active domain's newest certificate expires, as gauges.
EXPIRING_WITHIN_DAYS = (7, 14)


def check_recorded(code: str) -> None:
    CHECKS.labels(code=code).inc()


def domain_active(domain: Domain) -> None:
    """The domain's first certificate is stored: observed once its transaction commits."""
    if domain.verified_at is not None:
        seconds = (timezone.now() - domain.verified_at).total_seconds()
        transaction.on_commit(lambda: VERIFY_TO_ACTIVE.observe(max(seconds, 0.0)))


def renewal_failed() -> None:
    RENEWALS_FAILED.inc()


def acme_error(kind: str) -> None:
    ACME_ERRORS.labels(type=kind or "unknown").inc()


# The edge endpoint's status -> the lookup's result.
LOOKUP_RESULTS = {"200": "served", "204": "none", "403": "refused", "404": "refused"}

StartResponse = Callable[[str, list[tuple[str, str]]], object]
WSGIApp = Callable[[dict, StartResponse], Iterable[bytes]]


def edge_lookup_metrics(application: WSGIApp) -> WSGIApp:
    """Counts and times every answer of the edge's certificate endpoint (a decorator on
    its WSGI callable, so it holds whatever the endpoint does inside, a cache included)."""

    @wraps(application)
    def timed(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        status = ["500"]

        def starting(line: str, headers: list[tuple[str, str]]) -> object:
            status[0] = line[:3]
            return start_response(line, headers)

        try:
            return application(environ, starting)
        finally:
            EDGE_LOOKUP_SECONDS.observe(time.perf_counter() - started)
            EDGE_LOOKUPS.labels(result=LOOKUP_RESULTS.get(status[0], "error")).inc()

    return timed


class DomainCollector:
    """petstore_domains{state} and petstore_certificates_expiring{within_days}, now."""

    def collect(self) -> Iterator[Metric]:
        counts = dict(Domain.objects.order_by().values_list("state").annotate(count=Count("pk")))
        domains = GaugeMetricFamily(
            "petstore_domains", "Custom domains in each state, now.", labels=["state"]
        )
        for state in State:
            domains.add_metric([state.value], counts.get(state.value, 0))
        yield domains
        now = timezone.now()
        newest = (
            Domain.objects.order_by()
            .filter(state=State.ACTIVE)
            .annotate(expires=Max("certificates__not_after"))
        )
        expiring = newest.aggregate(
            **{
                f"within_{days}": Count("pk", filter=Q(expires__lt=now + timedelta(days=days)))
                for days in EXPIRING_WITHIN_DAYS
            }
        )
        family = GaugeMetricFamily(
            "petstore_certificates_expiring",
            "Active domains whose newest certificate expires within this many days (renewal "
            "starts a third of the validity before: one this close is a renewal not done).",
            labels=["within_days"],
        )
        for days in EXPIRING_WITHIN_DAYS:
            family.add_metric([str(days)], expiring[f"within_{days}"])
        yield family
