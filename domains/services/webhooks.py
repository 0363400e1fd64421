"""A project's webhook endpoints (dashboard, API): add, rotate the secret, remove, and
redeliver. The secret is returned once, by the call that makes it; no read shows it again.
Sending is the webhook channel's (domains/channels/webhooks.py); services never queue:
Redeliver returns the attempt it made due as NextSteps, and the beat finds it anyway.

Add checks the URL (its DNS) in the web request, so `endpoint_check` waits at most
WEBHOOKS_CREATE_DNS_DEADLINE and never inside a transaction (the caller checks first, then
creates in its own); the URLs it refuses count against WEBHOOKS_FAILED_CREATES_PER_HOUR,
and Redeliver against WEBHOOKS_REDELIVER_PER_MINUTE (domains/webhooks/limits.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from domains.channels.webhooks import WebhookChannel
from domains.choices import AuditAction, DeliveryState
from domains.models import Delivery, Project, WebhookEndpoint
from domains.selectors import webhook_deliveries
from domains.services.audit import audit_record
from domains.services.events import event_types_clean
from domains.services.nextsteps import NextSteps
from domains.webhooks import address, limits, signing

# Endpoints per project: enough for a few environments, few enough that one event stays
# a few requests.
MAX_ENDPOINTS = 10
# The guard's refusals that asked the DNS or named an address: counted per project per hour.
COUNTED_REFUSALS = frozenset({"webhook_unresolvable", "webhook_address", "webhook_platform"})


@dataclass(frozen=True)
class EndpointWithSecret:
    endpoint: WebhookEndpoint
    # Shown once: the caller displays it and forgets it.
    secret: str


def _events(events: Iterable[str]) -> list[str]:
    chosen = event_types_clean(events)
    if not chosen:
        raise ValidationError(_("Choose at least one event."), code="webhook_events")
    return chosen


def endpoint_check(*, project: Project, url: str) -> address.Target:
    """The URL's target, its DNS given at most WEBHOOKS_CREATE_DNS_DEADLINE; call it outside
    any transaction. Refused with webhook_create_limit, before any DNS, once the project's
    refused URLs this hour reach WEBHOOKS_FAILED_CREATES_PER_HOUR."""
    limit = settings.WEBHOOKS_FAILED_CREATES_PER_HOUR
    refused, left = limits.refused_creates(project.pk)
    if refused >= limit:
        raise ValidationError(
            _(
                "This project had %(limit)d webhook URLs refused in the last hour, the most "
                "allowed; add an endpoint again in %(minutes)d minutes."
            ),
            code="webhook_create_limit",
            params={"limit": limit, "minutes": left // 60 + 1},
        )
    deadline = min(settings.WEBHOOKS_CREATE_DNS_DEADLINE, settings.DOMAINS_DNS_LIFETIME)
    try:
        return address.check_url(url, lifetime=deadline)
    except ValidationError as exc:
        if exc.error_list[0].code in COUNTED_REFUSALS:
            limits.refused_create_count(project.pk)
        raise


def endpoint_create(
    *, project: Project, url: str | address.Target, events: Iterable[str]
) -> EndpointWithSecret:
    """A new endpoint with a new secret; refused (ValidationError with a code) for a URL
    the address guard refuses, a URL the project has already, unknown events, or a project
    at MAX_ENDPOINTS. `url` may
    be what endpoint_check returned (a caller inside a transaction checks before it)."""
    chosen = _events(events)
    target = url if isinstance(url, address.Target) else endpoint_check(project=project, url=url)
    with transaction.atomic():
        Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
        if WebhookEndpoint.objects.filter(project=project, url=target.url).exists():
            raise ValidationError(
                _(
                    "%(url)s already receives this project's events; change its events by "
                    "deleting it and adding it again, or choose another URL."
                ),
                code="duplicate",
                params={"url": target.url},
            )
        if WebhookEndpoint.objects.filter(project=project).count() >= MAX_ENDPOINTS:
            raise ValidationError(
                _("A project has at most %(limit)d webhook endpoints; remove one first."),
                code="webhook_limit",
                params={"limit": MAX_ENDPOINTS},
            )
        secret = signing.new_secret()
        endpoint = WebhookEndpoint.objects.create(
            project=project, url=target.url, events=chosen, secret=secret
        )
        audit_record(
            project,
            AuditAction.WEBHOOK_CREATED,
            audit_target(endpoint),
            changes={"url": (None, audit_url(endpoint.url)), "events": (None, chosen)},
        )
    return EndpointWithSecret(endpoint=endpoint, secret=secret)


def endpoint_rotate_secret(*, endpoint: WebhookEndpoint) -> EndpointWithSecret:
    """A new secret, from the next attempt on; the old one stops signing now."""
    secret = signing.new_secret()
    with transaction.atomic():
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(secret=secret)
        audit_record(
            endpoint.project_id, AuditAction.WEBHOOK_SECRET_ROTATED, audit_target(endpoint)
        )
    endpoint.secret = secret
    return EndpointWithSecret(endpoint=endpoint, secret=secret)


def endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    """Remove the endpoint and its delivery log (attempts go with their deliveries)."""
    with transaction.atomic():
        webhook_deliveries(endpoint).delete()
        target = audit_target(endpoint)
        endpoint.delete()
        audit_record(
            endpoint.project_id,
            AuditAction.WEBHOOK_DELETED,
            target,
            changes={"url": (audit_url(endpoint.url), None), "events": (endpoint.events, None)},
        )


def audit_url(url: str) -> str:
    """An endpoint's URL as the audit log keeps it: without its user, password and query,
    where a receiver may carry a token of its own."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def audit_target(endpoint: WebhookEndpoint) -> str:
    return f"webhook {endpoint.pk} {audit_url(endpoint.url)}"


def delivery_redeliver(*, delivery: Delivery) -> NextSteps:
    """Make the delivery due now: one more attempt, whatever its state (a delivered event
    is sent again, with the same webhook-id); the attempt to queue. Refused for a disabled
    endpoint, and past WEBHOOKS_REDELIVER_PER_MINUTE of the project's."""
    endpoint = WebhookEndpoint.objects.get(pk=delivery.target_id)
    if delivery.channel != WebhookChannel.name or endpoint.disabled_at is not None:
        raise ValidationError(
            _("This endpoint is disabled; add it again to receive events."),
            code="webhook_disabled",
        )
    allowed, left = limits.redeliver_allowed(endpoint.project_id)
    if not allowed:
        raise ValidationError(
            _(
                "A project may choose Redeliver %(limit)d times a minute, the most allowed; "
                "try again in %(left)d seconds."
            ),
            code="webhook_redeliver_limit",
            params={"limit": settings.WEBHOOKS_REDELIVER_PER_MINUTE, "left": left},
        )
    # A sending delivery is left to its attempt: its claim would be taken from under it.
    with transaction.atomic():
        Delivery.objects.filter(pk=delivery.pk).exclude(state=DeliveryState.SENDING).update(
            state=DeliveryState.PENDING, next_attempt_at=timezone.now(), finished_at=None
        )
        before = delivery.state
        delivery.refresh_from_db()
        audit_record(
            endpoint.project_id,
            AuditAction.DELIVERY_REDELIVERED,
            f"delivery {delivery.pk} to {audit_target(endpoint)}",
            changes={"state": (before, delivery.state)} if before != delivery.state else None,
        )
    return NextSteps(deliveries=[(delivery.channel, delivery.pk)])
