"""Django system checks of the custom-domains settings (`manage.py check`), and the
worker's own start-up check of DOMAINS_KEY_ENCRYPTION_KEY."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from celery.signals import worker_init
from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.db import DatabaseError

from domains.dns.hostnames import comparable, registrable_domain
from domains.pki.stored import key_problem


@register()
def dashboard_apart_from_tenants(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> Sequence[CheckMessage]:
    """Tenant pages at <slug>.PLATFORM_DOMAIN must not share a site with the dashboard: a
    page on a sibling host could set cookies for the shared parent (cookie tossing)."""
    dashboard = comparable(settings.DASHBOARD_HOST)
    platform = comparable(settings.PLATFORM_DOMAIN)
    if dashboard and registrable_domain(dashboard) == registrable_domain(platform):
        return [
            Warning(
                f"DASHBOARD_HOST ({dashboard}) and PLATFORM_DOMAIN ({platform}) share the "
                f"registrable domain {registrable_domain(platform)}: tenant pages could set "
                "cookies the dashboard reads.",
                hint=(
                    "Serve tenant pages from a registrable domain of their own (one on the "
                    "Public Suffix List, as github.io and vercel.app are)."
                ),
                id="domains.W001",
            )
        ]
    return []


@register()
def key_encryption_key_opens_stored_keys(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> Sequence[CheckMessage]:
    """A wrong DOMAINS_KEY_ENCRYPTION_KEY would otherwise show only as a failed TLS
    handshake for every domain. Only where a key is set: the web process has none and needs
    none (the worker and the edge refuse to start without one on their own)."""
    if not settings.DOMAINS_KEY_ENCRYPTION_KEY:
        return []
    try:
        problem = key_problem()
    except DatabaseError:
        return []  # no schema yet (before the first migrate): no key is stored in a row
    if problem is None:
        return []
    return [Error(problem, id="domains.E001")]


@worker_init.connect
def worker_refuses_keys_it_cannot_open(sender: Any = None, **kwargs: Any) -> None:
    """Every certificate the worker issues or renews is sealed, and the ACME path opens its
    keys: without the right key it would fail each of those tasks, one by one. Only a worker
    that takes certificate work holds the key; one on the checks queue alone never opens a
    key and is started without it. SystemExit, not an exception: Celery logs and ignores
    what a signal's receiver raises."""
    queues = sender.app.amqp.queues
    consumed = queues.consume_from or queues  # without -Q a worker takes every queue
    if settings.CERTIFICATES_QUEUE in consumed and (problem := key_problem()):
        raise SystemExit(f"worker: {problem}")
