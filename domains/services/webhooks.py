"""A project's webhook endpoints (dashboard, API): add, rotate the secret, remove, and
redeliver. The secret is returned once, by the call that makes it; no read shows it again.
Sending is domains/webhooks/delivery.py's (services never queue: the caller queues the
attempt a Redeliver made due, and the beat finds it anyway)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from domains.choices import DeliveryState, EventType
from domains.models import Project, WebhookDelivery, WebhookEndpoint
from domains.webhooks import address, signing

# Endpoints per project: enough for a few environments, few enough that one event stays
# a few requests.
MAX_ENDPOINTS = 10


@dataclass(frozen=True)
class EndpointWithSecret:
    endpoint: WebhookEndpoint
    # Shown once: the caller displays it and forgets it.
    secret: str


def _events(events: Iterable[str]) -> list[str]:
    chosen = sorted(set(events))
    if not chosen:
        raise ValidationError("Choose at least one event.", code="webhook_events")
    unknown = [value for value in chosen if value not in EventType.values]
    if unknown:
        raise ValidationError(
            f"Unknown event type: {', '.join(unknown)}.", code="unknown_event_type"
        )
    return chosen


def endpoint_create(*, project: Project, url: str, events: Iterable[str]) -> EndpointWithSecret:
    """A new endpoint with a new secret; refused (ValidationError with a code) for a URL
    the address guard refuses, unknown events, or a project at MAX_ENDPOINTS."""
    chosen = _events(events)
    target = address.check_url(url)
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
    """Remove the endpoint and its delivery log."""
    endpoint.delete()


def delivery_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Make the delivery due now: one more attempt, whatever its state (a delivered event
    is sent again, with the same webhook-id). Refused for a disabled endpoint."""
    if delivery.endpoint.disabled_at is not None:
        raise ValidationError(
            "This endpoint is disabled; add it again to receive events.",
            code="webhook_disabled",
        )
    # A sending delivery is left to its attempt: its claim would be taken from under it.
    WebhookDelivery.objects.filter(pk=delivery.pk).exclude(state=DeliveryState.SENDING).update(
        state=DeliveryState.PENDING, next_attempt_at=timezone.now()
    )
    delivery.refresh_from_db()
    return delivery
