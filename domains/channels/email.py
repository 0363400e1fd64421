"""The email channel: one delivery per event to its project (the owner's account address,
read when the mail is sent), sent as one digest per project.

An event's first attempt is due DIGEST_WINDOW after it happened; when a project's oldest
waiting delivery is due, every waiting delivery of the project goes in one message (the
engine's `batched`). Before it is built, the events the owner did not choose, and those
whose type was mailed for the same host name within EVENT_REPEAT_AFTER, are set aside
(skipped). Plain text and HTML, each from one template (templates/notifications/digest.txt
and .html; Django's autoescaping covers everything a tenant typed, such as host names, in
the HTML). Other mails of the channel are templates beside it (`webhook_disabled.txt`).
"""

from __future__ import annotations

import logging
import smtplib
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, send_mail
from django.template.loader import render_to_string

from domains.channels.base import Channel, Outcome
from domains.choices import DeliveryState, EventType
from domains.models import Delivery, NotificationPreference, OwnerEvent, Project, WebhookEndpoint
from domains.policy import DIGEST_WINDOW, EMAIL_RETRY_BACKOFF, EVENT_REPEAT_AFTER
from petstore.taskfailures import describe

log = logging.getLogger(__name__)


class EmailChannel(Channel):
    name = "email"
    label = "Email"
    # 1, 5, 15 minutes, then 1 and 3 hours: six attempts over about 4.5 hours.
    backoff = EMAIL_RETRY_BACKOFF
    lease = timedelta(minutes=5)
    first_delay = DIGEST_WINDOW
    batched = True
    count_failures = True

    def targets(self, events: Sequence[OwnerEvent]) -> Iterable[tuple[OwnerEvent, int]]:
        # Every event: one the owner did not choose is skipped when it is due, so the
        # outbox is also the record of what was (not) said.
        return [(event, event.project_id) for event in events]

    def choose(
        self, deliveries: list[Delivery], now: datetime
    ) -> tuple[list[Delivery], list[Delivery]]:
        project = _project(deliveries)
        if not project.owner.email:
            return [], deliveries
        chosen = NotificationPreference.objects.email_events_of(project.owner_id)
        told = set(
            Delivery.objects.filter(
                channel=self.name,
                target_id=project.pk,
                state=DeliveryState.DELIVERED,
                finished_at__gt=now - EVENT_REPEAT_AFTER,
            ).values_list("event__hostname", "event__type")
        )
        to_send, skipped = [], []
        for delivery in deliveries:
            event = delivery.event
            subject = (event.hostname, event.type)
            if event.type not in chosen or subject in told:
                skipped.append(delivery)
            else:
                told.add(subject)
                to_send.append(delivery)
        return to_send, skipped

    def send(self, deliveries: list[Delivery], now: datetime) -> Outcome:
        project = _project(deliveries)
        events = [delivery.event for delivery in deliveries]
        message = digest_message(project=project, events=events, to=project.owner.email)
        started = time.monotonic()
        try:
            message.send()
        except (smtplib.SMTPException, OSError) as exc:
            took = round((time.monotonic() - started) * 1000)
            return Outcome(ok=False, duration_ms=took, response=describe(exc))
        return Outcome(ok=True, duration_ms=round((time.monotonic() - started) * 1000))


def _project(deliveries: list[Delivery]) -> Project:
    return Project.objects.select_related("owner").get(pk=deliveries[0].target_id)


# --- The messages ------------------------------------------------------------------


def dashboard_url(path: str) -> str:
    """The absolute address of a dashboard page: https on DASHBOARD_HOST, plain http on
    the development port under DEBUG."""
    if settings.DEBUG:
        return f"http://{settings.DASHBOARD_HOST}:{settings.HTTP_PORT}{path}"
    port = "" if settings.HTTPS_PORT == 443 else f":{settings.HTTPS_PORT}"
    return f"https://{settings.DASHBOARD_HOST}{port}{path}"


def _when(value: str | None) -> str:
    if not value:
        return ""
    return f"{datetime.fromisoformat(value):%Y-%m-%d %H:%M} UTC"


def _item(event: OwnerEvent) -> dict[str, Any]:
    data = event.data
    return {
        "type": event.type,
        "label": EventType(event.type).label,
        "hostname": event.hostname,
        "occurred_at": f"{event.occurred_at:%Y-%m-%d %H:%M} UTC",
        "what": data.get("what", ""),
        "what_to_do": data.get("what_to_do", ""),
        "url": dashboard_url(data.get("path", "/dashboard/")),
        "stops_serving_at": _when(data.get("stops_serving_at")),
        "expires_at": _when(data.get("expires_at")),
        "reason": data.get("reason", ""),
        "findings": [finding["message"] for finding in data.get("findings", [])],
    }


def subject(project: Project, events: list[OwnerEvent]) -> str:
    if len(events) == 1:
        event = events[0]
        return f"{event.hostname}: {EventType(event.type).label}"
    return f"{len(events)} updates about the domains of {project.slug}"


def digest_message(
    *, project: Project, events: list[OwnerEvent], to: str
) -> EmailMultiAlternatives:
    context = {
        "project": project.slug,
        "events": [_item(event) for event in events],
        "settings_url": dashboard_url("/dashboard/settings/notifications/"),
    }
    message = EmailMultiAlternatives(
        # A subject is one line: a host name never carries a newline, but be sure.
        subject=" ".join(subject(project, events).split()),
        body=render_to_string("notifications/digest.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
    )
    message.attach_alternative(render_to_string("notifications/digest.html", context), "text/html")
    return message


def notice_webhook_disabled(*, endpoint_id: int) -> None:
    """Tell the owner once that an endpoint was disabled (the conditional UPDATE that
    disabled it decided once); a mail server that is down costs the mail, not the change."""
    endpoint = WebhookEndpoint.objects.select_related("project__owner").get(pk=endpoint_id)
    project = endpoint.project
    if not project.owner.email:
        return
    name = project.name or project.slug
    context = {
        "project": name,
        "url": endpoint.url,
        "since": f"{endpoint.failing_since:%Y-%m-%d %H:%M} UTC" if endpoint.failing_since else "",
        "settings_url": dashboard_url("/dashboard/settings/notifications/"),
    }
    text = render_to_string("notifications/webhook_disabled.txt", context)
    try:
        send_mail(f"[{name}] Webhook endpoint disabled", text, None, [project.owner.email])
    except (smtplib.SMTPException, OSError):
        log.exception("mailing the owner of %s about a disabled webhook failed", project.slug)
