"""Webhook deliveries: created from the owner events, claimed with a conditional UPDATE,
sent, and retried on a schedule. The database is the record: beat's `dispatch_webhooks`
creates the deliveries of new events and queues every attempt that is due, so a lost
message only waits for the next beat.

- One delivery per (endpoint, event), made by `dispatch` for each enabled endpoint from the
  events of its project it subscribed to since it was created (a unique constraint makes
  two dispatchers harmless). Events are never told twice by the dispatcher; Redeliver
  (services/webhooks.py) makes a delivery due again.
- `deliver` claims one due delivery (pending, or sending with an ended lease) with one
  conditional UPDATE, checks the URL again (address.py: a name may now resolve elsewhere),
  signs, POSTs to the checked address and records the answer. A 2xx delivers; anything
  else waits WEBHOOK_RETRY_BACKOFF, and fails after WEBHOOK_MAX_ATTEMPTS.
- An endpoint whose attempts have failed for WEBHOOK_DISABLE_AFTER with no success between
  is disabled, and its project's owner is mailed once (the conditional UPDATE decides).
- An attempt holds a slot toward its host and for its project (limits.in_flight) from
  before its claim until it is recorded; with none free it is due again BUSY_RETRY later,
  not counted, so one tenant's silent receivers hold a few worker threads, never all. Its
  DNS and its request share one WEBHOOKS_TIMEOUT.
"""

from __future__ import annotations

import json
import logging
import smtplib
import time
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from domains.choices import (
    WEBHOOK_DISABLE_AFTER,
    WEBHOOK_MAX_ATTEMPTS,
    WEBHOOK_RESPONSE_EXCERPT,
    WEBHOOK_RETRY_BACKOFF,
    DeliveryState,
)
from domains.models import OwnerEvent, WebhookDelivery, WebhookEndpoint
from domains.notifications.digest import dashboard_url
from domains.webhooks import address, client, limits, signing

log = logging.getLogger(__name__)

# A claim not finished in this long (the worker died) is taken over by the next beat.
LEASE = timedelta(minutes=1)
# How far back the dispatcher looks for events without a delivery.
LOOKBACK = timedelta(days=1)
WAITING = (DeliveryState.PENDING, DeliveryState.SENDING)


def dispatch(*, now: datetime | None = None) -> int:
    """Create the missing deliveries of recent events; the number created."""
    now = now or timezone.now()
    created = 0
    for endpoint in WebhookEndpoint.objects.filter(disabled_at__isnull=True):
        events = (
            OwnerEvent.objects.filter(
                project_id=endpoint.project_id,
                type__in=endpoint.events,
                occurred_at__gte=max(endpoint.created_at, now - LOOKBACK),
            )
            .exclude(deliveries__endpoint=endpoint)
            .values_list("pk", flat=True)
        )
        rows = [
            WebhookDelivery(endpoint=endpoint, event_id=pk, next_attempt_at=now) for pk in events
        ]
        created += len(WebhookDelivery.objects.bulk_create(rows, ignore_conflicts=True))
    return created


def due(*, now: datetime | None = None) -> list[int]:
    now = now or timezone.now()
    return list(
        WebhookDelivery.objects.filter(
            state__in=WAITING, next_attempt_at__lte=now, endpoint__disabled_at__isnull=True
        )
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)
    )


def payload(event: OwnerEvent) -> bytes:
    """The body: the Standard Webhooks shape, the event's data with its project and domain."""
    data = {**event.data, "project": event.project.slug, "domain": event.hostname}
    body = {"type": event.type, "timestamp": event.occurred_at.isoformat(), "data": data}
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def deliver(*, delivery_id: int, now: datetime | None = None) -> WebhookDelivery | None:
    """One attempt of a due delivery, if this call claims it; the delivery as recorded."""
    now = now or timezone.now()
    due_now = WebhookDelivery.objects.filter(
        pk=delivery_id,
        state__in=WAITING,
        next_attempt_at__lte=now,
        endpoint__disabled_at__isnull=True,
    )
    found = due_now.values_list("endpoint__url", "endpoint__project_id").first()
    if found is None:
        return None
    url, project_id = found
    with limits.in_flight(host=address.host_of(url), project_id=project_id) as slot:
        if not slot:  # due again shortly; the beat (or a queued message) tries it then
            due_now.update(next_attempt_at=now + limits.BUSY_RETRY)
            return None
        claim = uuid.uuid4()
        # The conditional UPDATE: a concurrent worker that claimed it first changed its lease.
        claimed = due_now.update(
            state=DeliveryState.SENDING, claim=claim, next_attempt_at=now + LEASE
        )
        if not claimed:
            return None
        delivery = WebhookDelivery.objects.select_related(
            "endpoint", "event", "event__project"
        ).get(pk=delivery_id)
        answer = _attempt(delivery, now)
        return _record(delivery, claim, answer, now)


def _attempt(delivery: WebhookDelivery, now: datetime) -> client.Answer:
    """The check and the POST, within one WEBHOOKS_TIMEOUT: the DNS gets at most all of it
    and the request what the DNS left."""
    endpoint, event = delivery.endpoint, delivery.event
    started = time.monotonic()
    budget = settings.WEBHOOKS_TIMEOUT
    try:
        target = address.check_url(
            endpoint.url, lifetime=min(settings.DOMAINS_DNS_LIFETIME, budget)
        )
    except ValidationError as exc:
        took = round((time.monotonic() - started) * 1000)
        return client.Answer(None, took, " ".join(exc.messages)[:WEBHOOK_RESPONSE_EXCERPT])
    body = payload(event)
    headers = signing.headers(
        secret=endpoint.secret,
        message_id=delivery.message_id,
        timestamp=int(now.timestamp()),
        body=body,
    )
    left = max(budget - (time.monotonic() - started), 0.1)
    return client.post(
        target, body=body, headers=headers, excerpt=WEBHOOK_RESPONSE_EXCERPT, timeout=left
    )


def _record(
    delivery: WebhookDelivery, claim: uuid.UUID, answer: client.Answer, now: datetime
) -> WebhookDelivery:
    attempts = delivery.attempts + 1
    fields = {
        "attempts": attempts,
        "status_code": answer.status,
        "duration_ms": answer.duration_ms,
        "response": answer.text,
        "attempted_at": now,
        "claim": None,
    }
    if answer.ok:
        fields |= {"state": DeliveryState.DELIVERED, "delivered_at": now}
    elif attempts >= WEBHOOK_MAX_ATTEMPTS:
        fields |= {"state": DeliveryState.FAILED}
    else:
        backoff = WEBHOOK_RETRY_BACKOFF[attempts - 1]
        fields |= {"state": DeliveryState.PENDING, "next_attempt_at": now + backoff}
    disabled = 0
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk, claim=claim).update(**fields)
        endpoint = WebhookEndpoint.objects.filter(pk=delivery.endpoint_id)
        if answer.ok:
            endpoint.update(failing_since=None)
        else:
            endpoint.filter(failing_since__isnull=True).update(failing_since=now)
            disabled = endpoint.filter(
                disabled_at__isnull=True, failing_since__lte=now - WEBHOOK_DISABLE_AFTER
            ).update(disabled_at=now)
    if disabled:  # after the commit: the mail never holds the rows
        _mail_disabled(delivery.endpoint_id)
    delivery.refresh_from_db()
    return delivery


def _mail_disabled(endpoint_id: int) -> None:
    """Tell the owner once; a mail server that is down costs the mail, not the change."""
    endpoint = WebhookEndpoint.objects.select_related("project__owner").get(pk=endpoint_id)
    project = endpoint.project
    name = project.name or project.slug
    if not project.owner.email:
        return
    page = dashboard_url("/dashboard/settings/notifications/")
    since = f"{endpoint.failing_since:%Y-%m-%d %H:%M} UTC" if endpoint.failing_since else ""
    text = (
        f"The webhook endpoint {endpoint.url} of project {name} has failed every "
        f"delivery since {since}, so it is disabled: no more events are sent to it.\n\n"
        f"What to do: fix the receiver, then add the endpoint again at {page}\n"
    )
    try:
        send_mail(f"[{name}] Webhook endpoint disabled", text, None, [project.owner.email])
    except (smtplib.SMTPException, OSError):
        log.exception("mailing the owner of %s about a disabled webhook failed", project.slug)
