"""The custom domains' families: what their checks, certificates, CA and edge are doing.

Counters and histograms are counted where it happens, by one line each in the services,
the ACME client, the channels' engine and the edge's endpoint; gauges (`DomainCollector`)
are read from the database at scrape time, so they are right whichever process answers.
Registered with the endpoint by the app's ready() (petstore/metrics/endpoint.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from functools import wraps

import redis
from cryptography import x509
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone
from prometheus_client import Counter
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from domains.choices import CaSkipReason, PlatformKeyUse, State
from domains.models import Domain, PlatformKey
from petstore.metrics import store

log = logging.getLogger(__name__)

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
RENEWALS = store.counter(
    "petstore_certificate_renewals_total",
    "Certificate renewals tried, by outcome: renewed, refused (the CA said no), blocked "
    "(the owner's DNS: no passing check for a day, or CAA forbids the CA).",
    ["outcome"],
)
# `refused` is the platform's problem (PetstoreRenewalsFailing); `blocked` is the owner's
# (their domain's Activity and notifications say so), as the checks' codes are.
RENEWAL_OUTCOMES = ("renewed", "refused", "blocked")
ACME_ERRORS = store.counter(
    "petstore_acme_errors_total",
    "Errors from the ACME certificate authority, by type (its RFC 8555 error type, "
    "`refused`, `unreachable`).",
    ["type"],
)
# The ACME error types the alerts name (RFC 8555's `rateLimited`, and ours).
ACME_ERROR_TYPES = ("rateLimited", "refused", "unreachable")
ACME_ISSUED = store.counter(
    "petstore_acme_certificates_issued_total",
    "Certificates an ACME CA issued (first ones and renewals), by CA (its directory URL) and "
    "fallback: `true` when the CA the order was meant for was skipped for its own failure.",
    ["ca", "fallback"],
)
ACME_SKIPS = store.counter(
    "petstore_acme_skips_total",
    "Orders moved on from an ACME CA to the next in DOMAINS_ACME_DIRECTORIES, by CA and "
    "reason (domains.choices.CaSkipReason).",
    ["ca", "reason"],
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
EDGE_LOADS = store.counter(
    "petstore_edge_certificate_loads_total",
    "Sets of certificates the edge loaded into Caddy, by result: loaded, refused (by Caddy: "
    "it then holds none), emptied (the database did not answer: it holds none).",
    ["result"],
)
EDGE_LOAD_SECONDS = store.histogram(
    "petstore_edge_certificate_load_seconds",
    "How long Caddy took to load the certificates it holds (domains/edge/heldcertificates.py).",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
WEBHOOK_ATTEMPTS = store.counter(
    "petstore_webhook_delivery_attempts_total",
    "Webhook delivery attempts (one POST each, the address check included), by outcome: "
    "delivered (a 2xx answer) or failed (retried on the backoff until its attempts run out).",
    ["outcome"],
)
EMAIL_DELIVERIES = store.counter(
    "petstore_email_deliveries_total",
    "Notification mails (one digest each) handed to the SMTP server, by outcome: delivered "
    "(accepted) or failed (refused or unreachable; retried on the backoff).",
    ["outcome"],
)
DELIVERY_OUTCOMES = ("delivered", "failed")
# Every series an alert watches with increase() exists at 0 from the start: Prometheus
# cannot see the increase of a series whose first sample is already 1, so the first
# failed renewal or rate limit ever would go unnoticed.
for _outcome in RENEWAL_OUTCOMES:
    RENEWALS.labels(outcome=_outcome)
for _type in ACME_ERROR_TYPES:
    ACME_ERRORS.labels(type=_type)
if settings.DOMAINS_CA == "acme":
    for _ca in settings.DOMAINS_ACME_DIRECTORIES:
        for _fallback in ("false", "true"):
            ACME_ISSUED.labels(ca=_ca, fallback=_fallback)
        for _reason in CaSkipReason.values:
            ACME_SKIPS.labels(ca=_ca, reason=_reason)
for _outcome in DELIVERY_OUTCOMES:
    WEBHOOK_ATTEMPTS.labels(outcome=_outcome)
    EMAIL_DELIVERIES.labels(outcome=_outcome)
# The days within which an active domain's newest certificate expires, as gauges. Renewal
# starts 30 days before expiry (a third of a 90-day certificate): 21 days left means
# renewals have failed for 9 days (the warning), 7 days for 23 (critical).
EXPIRING_WITHIN_DAYS = (7, 14, 21)


def check_recorded(code: str) -> None:
    """One check recorded: counted once its transaction commits, so a check recorded in a
    savepoint that is rolled back (a batch that falls back to one by one records its checks
    again) or in a transaction that fails is not counted."""
    transaction.on_commit(CHECKS.labels(code=code).inc)


def domain_active(domain: Domain) -> None:
    """The domain's first certificate is stored: observed once its transaction commits."""
    if domain.verified_at is not None:
        seconds = (timezone.now() - domain.verified_at).total_seconds()
        transaction.on_commit(lambda: VERIFY_TO_ACTIVE.observe(max(seconds, 0.0)))


def renewal_done(outcome: str) -> None:
    """One renewal tried: `renewed` (counted once the certificate's transaction commits),
    `refused` or `blocked` (RENEWAL_OUTCOMES; the refusal happened whatever becomes of the
    transaction that records it)."""
    series = RENEWALS.labels(outcome=outcome)
    if outcome == "renewed":
        transaction.on_commit(series.inc)
    else:
        series.inc()


def delivery_attempted(counter: Counter, *, ok: bool) -> None:
    """One attempt of a channel, counted in its family (WEBHOOK_ATTEMPTS, EMAIL_DELIVERIES)."""
    counter.labels(outcome=DELIVERY_OUTCOMES[0] if ok else DELIVERY_OUTCOMES[1]).inc()


def acme_error(kind: str) -> None:
    ACME_ERRORS.labels(type=kind or "unknown").inc()


def acme_skipped(ca: str, reason: str) -> None:
    ACME_SKIPS.labels(ca=ca, reason=reason).inc()


def acme_issued(ca: str, *, fallback: bool) -> None:
    """A certificate from `ca` is stored: counted once its transaction commits."""
    transaction.on_commit(ACME_ISSUED.labels(ca=ca, fallback=str(fallback).lower()).inc)


# When the sweep last finished (Unix seconds), kept in Redis through the cache (never
# expiring) so that every process's scrape reports the same time, whichever ran the sweep.
SWEEP_LAST_SUCCESS_KEY = "petstore:sweep:last-success"


def sweep_finished() -> None:
    """The sweep claimed its work and queued it: what PetstoreSweepStalled watches."""
    try:
        cache.set(SWEEP_LAST_SUCCESS_KEY, time.time(), timeout=None)
    except redis.RedisError as exc:
        # The sweep's work is done and queued; only its time is lost (the alert then fires
        # if Redis stays down, which the queues need as well).
        log.warning("Could not record the sweep's success (%s)", exc)


def edge_certificates_loaded(result: str, *, seconds: float) -> None:
    EDGE_LOADS.labels(result=result).inc()
    EDGE_LOAD_SECONDS.observe(seconds)


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
    """petstore_domains{state} and petstore_certificates_expiring{within_days} (the platform's
    own certificate counted with the domains'), now."""

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
        platform = platform_certificate_expiry()
        family = GaugeMetricFamily(
            "petstore_certificates_expiring",
            "Active domains whose newest certificate expires within this many days, and the "
            "platform's own wildcard certificate when it does (renewal starts a third of the "
            "validity before: one this close is a renewal not done).",
            labels=["within_days"],
        )
        for days in EXPIRING_WITHIN_DAYS:
            soon = platform is not None and platform < now + timedelta(days=days)
            family.add_metric([str(days)], expiring[f"within_{days}"] + int(soon))
        yield family


def platform_certificate_expiry() -> datetime | None:
    """When the platform's own certificate (issued over DNS-01) expires; None when it has none,
    or when the operator serves theirs (EDGE_PLATFORM_CERTIFICATE), which nothing here renews:
    the edge's probe watches that one."""
    if settings.EDGE_PLATFORM_CERTIFICATE:
        return None
    pem = (
        PlatformKey.objects.filter(use=PlatformKeyUse.PLATFORM_CERTIFICATE)
        .values_list("certificate_pem", flat=True)
        .first()
    )
    if pem is None:
        return None
    return x509.load_pem_x509_certificates(pem.encode())[0].not_valid_after_utc


class SweepCollector:
    """petstore_sweep_last_success_timestamp_seconds: 0 until a sweep has finished (or
    after Redis lost the key), so a sweep that never ran reads as stalled too."""

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "petstore_sweep_last_success_timestamp_seconds",
            "When the domains' sweep last finished successfully (Unix time; 0: never).",
        )
        family.add_metric([], float(cache.get(SWEEP_LAST_SUCCESS_KEY) or 0))
        yield family
