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

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from domains.channels.webhooks import WebhookChannel
from domains.choices import DeliveryState
from domains.models import Delivery, Project, WebhookEndpoint
from domains.selectors import webhook_deliveries
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
        raise ValidationError("Choose at least one event.", code="webhook_events")
    return chosen


def endpoint_check(*, project: Project, url: str) -> address.Target:
    """The URL's target, its DNS given at most WEBHOOKS_CREATE_DNS_DEADLINE; call it outside
    any transaction. Refused with webhook_create_limit, before any DNS, once the project's
    refused URLs this hour reach WEBHOOKS_FAILED_CREATES_PER_HOUR."""
    limit = settings.WEBHOOKS_FAILED_CREATES_PER_HOUR
    refused, left = limits.refused_creates(project.pk)
    if refused >= limit:
        raise ValidationError(
            f"This project had {limit} webhook URLs refused in the last hour, the most "
            f"allowed; add an endpoint again in {left // 60 + 1} minutes.",
            code="webhook_create_limit",
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
    the address guard refuses, unknown events, or a project at MAX_ENDPOINTS. `url` may
    be what endpoint_check returned (a caller inside a transaction checks before it)."""
    chosen = _events(events)
    target = url if isinstance(url, address.Target) else endpoint_check(project=project, url=url)
    with transaction.atomic():
        Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
        if WebhookEndpoint.objects.filter(project=project).count() >= MAX_ENDPOINTS:
            raise ValidationError(
                f"A project has at most {MAX_ENDPOINTS} webhook endpoints; remove one first.",
                code="webhook_limit",
            )
        secret = signing.new_secret()
        endpoint = WebhookEndpoint.objects.create(
            project=project, url=target.url, events=chosen, secret=secret
        )
    return EndpointWithSecret(endpoint=endpoint, secret=secret)


def endpoint_rotate_secret(*, endpoint: WebhookEndpoint) -> EndpointWithSecret:
    """A new secret, from the next attempt on; the old one stops signing now."""
    secret = signing.new_secret()
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(secret=secret)
    endpoint.secret = secret
    return EndpointWithSecret(endpoint=endpoint, secret=secret)


def endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    """Remove the endpoint and its delivery log (attempts go with their deliveries)."""
    with transaction.atomic():
        webhook_deliveries(endpoint).delete()
        endpoint.delete()


def delivery_redeliver(*, delivery: Delivery) -> NextSteps:
    """Make the delivery due now: one more attempt, whatever its state (a delivered event
    is sent again, with the same webhook-id); the attempt to queue. Refused for a disabled
    endpoint, and past WEBHOOKS_REDELIVER_PER_MINUTE of the project's."""
    endpoint = WebhookEndpoint.objects.get(pk=delivery.target_id)
    if delivery.channel != WebhookChannel.name or endpoint.disabled_at is not None:
        raise ValidationError(
            "This endpoint is disabled; add it again to receive events.",
            code="webhook_disabled",
        )
    allowed, left = limits.redeliver_allowed(endpoint.project_id)
    if not allowed:
        raise ValidationError(
            f"A project may choose Redeliver {settings.WEBHOOKS_REDELIVER_PER_MINUTE} times a "
            f"minute, the most allowed; try again in {left} seconds.",
            code="webhook_redeliver_limit",
        )
    # A sending delivery is left to its attempt: its claim would be taken from under it.
    Delivery.objects.filter(pk=delivery.pk).exclude(state=DeliveryState.SENDING).update(
        state=DeliveryState.PENDING, next_attempt_at=timezone.now(), finished_at=None
    )
    delivery.refresh_from_db()
    return NextSteps(deliveries=[(delivery.channel, delivery.pk)])
