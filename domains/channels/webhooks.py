"""The webhook channel: each owner event POSTed to every enabled endpoint of its project
that subscribed to its type, signed per Standard Webhooks (docs/decisions/webhooks.md).

What is webhook-specific lives in domains/webhooks/ and stays there: the SSRF guard
(address.py, asked again at every attempt: a name may now resolve elsewhere), the POST to
the address just checked (client.py), the signature (signing.py), and the in-flight caps
toward one host and for one project (limits.py), held as the engine's slot. An attempt's
DNS and its request share one WEBHOOKS_TIMEOUT. An endpoint whose attempts have failed for
WEBHOOK_DISABLE_AFTER with no success between is disabled (a conditional UPDATE, so once)
and its owner mailed, through the email channel's `webhook_disabled` template.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from domains import metrics
from domains.channels import email
from domains.channels.base import DELIVERY_RESPONSE_EXCERPT, Channel, Outcome
from domains.models import Delivery, OwnerEvent, WebhookEndpoint
from domains.policy import WEBHOOK_DISABLE_AFTER, WEBHOOK_RETRY_BACKOFF
from domains.webhooks import address, client, limits, signing
from petstore.sentences import refusal


def payload(event: OwnerEvent) -> bytes:
    """The body: the Standard Webhooks shape, the event's data with its project and domain."""
    data = {**event.data, "project": event.project.slug, "domain": event.hostname}
    body = {"type": event.type, "timestamp": event.occurred_at.isoformat(), "data": data}
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


class WebhookChannel(Channel):
    name = "webhook"
    label = "Webhooks"
    backoff = WEBHOOK_RETRY_BACKOFF
    lease = timedelta(minutes=1)
    busy_retry = limits.BUSY_RETRY
    attempts_counted = metrics.WEBHOOK_ATTEMPTS

    @property
    def queue(self) -> str:
        # Its own queue and worker: a tenant's slow receiver never sits in front of a check.
        return settings.WEBHOOKS_QUEUE

    def targets(self, events: Sequence[OwnerEvent]) -> Iterable[tuple[OwnerEvent, int]]:
        endpoints = WebhookEndpoint.objects.filter(
            project_id__in={event.project_id for event in events}, disabled_at__isnull=True
        ).values_list("pk", "project_id", "events")
        for pk, project_id, types in endpoints:
            for event in events:
                if event.project_id == project_id and event.type in types:
                    yield event, pk

    def deliverable(self, deliveries: QuerySet[Delivery]) -> QuerySet[Delivery]:
        enabled = WebhookEndpoint.objects.filter(disabled_at__isnull=True).values("pk")
        return deliveries.filter(target_id__in=enabled)

    def slot(self, delivery: Delivery) -> AbstractContextManager[bool]:
        return self._slot(delivery.target_id)

    @contextmanager
    def _slot(self, endpoint_id: int) -> Iterator[bool]:
        found = WebhookEndpoint.objects.filter(pk=endpoint_id).values_list("url", "project_id")
        url, project_id = found.get()
        with limits.in_flight(host=address.host_of(url), project_id=project_id) as free:
            yield free

    def send(self, deliveries: list[Delivery], now: datetime) -> Outcome:
        """The check and the POST, within one WEBHOOKS_TIMEOUT: the DNS gets at most all of
        it and the request what the DNS left."""
        [delivery] = deliveries
        endpoint = WebhookEndpoint.objects.get(pk=delivery.target_id)
        started = time.monotonic()
        budget = settings.WEBHOOKS_TIMEOUT
        try:
            target = address.check_url(
                endpoint.url, lifetime=min(settings.DOMAINS_DNS_LIFETIME, budget)
            )
        except ValidationError as exc:
            took = round((time.monotonic() - started) * 1000)
            said = refusal(exc)
            return Outcome(ok=False, duration_ms=took, response=said.english(), said=said)
        body = payload(delivery.event)
        headers = signing.headers(
            secret=endpoint.secret,
            message_id=delivery.message_id,
            timestamp=int(now.timestamp()),
            body=body,
        )
        left = max(budget - (time.monotonic() - started), 0.1)
        answer = client.post(
            target, body=body, headers=headers, excerpt=DELIVERY_RESPONSE_EXCERPT, timeout=left
        )
        return Outcome(answer.ok, answer.status, answer.duration_ms, answer.text)

    def recorded(
        self, deliveries: list[Delivery], outcome: Outcome, now: datetime
    ) -> Callable[[], None] | None:
        """The endpoint's failing clock: cleared by a success, started by a failure, and
        WEBHOOK_DISABLE_AFTER after it started, the endpoint is disabled."""
        [delivery] = deliveries
        endpoint = WebhookEndpoint.objects.filter(pk=delivery.target_id)
        if outcome.ok:
            endpoint.update(failing_since=None)
            return None
        endpoint.filter(failing_since__isnull=True).update(failing_since=now)
        disabled = endpoint.filter(
            disabled_at__isnull=True, failing_since__lte=now - WEBHOOK_DISABLE_AFTER
        ).update(disabled_at=now)
        if not disabled:
            return None
        return lambda: email.notice_webhook_disabled(endpoint_id=delivery.target_id)
