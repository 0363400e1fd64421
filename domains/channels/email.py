"""The email channel: one delivery per event to each member of its project whose role is
mailed (domains.access.MAILED_ROLES: owners and admins), the target being the membership:
the member's account address, role and choice of events are read when the mail is sent, so
a member removed or demoted in between is not mailed. Sent as one digest per member of a
project.

An event's first attempt is due DIGEST_WINDOW after it happened; when a project's oldest
waiting delivery is due, every waiting delivery of that member goes in one message (the
engine's `batched`). Before it is built, the events the member did not choose, and those
whose type was mailed to them for the same host name within EVENT_REPEAT_AFTER, are set
aside (skipped). Plain text and HTML, each from one template (templates/notifications/digest.txt
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
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext

from domains import metrics
from domains.access import MAILED_ROLES
from domains.channels.base import Channel, Outcome
from domains.choices import DeliveryState, EventType
from domains.models import (
    Delivery,
    Membership,
    NotificationPreference,
    OwnerEvent,
    Project,
    WebhookEndpoint,
)
from domains.policy import DIGEST_WINDOW, EMAIL_RETRY_BACKOFF, EVENT_REPEAT_AFTER
from petstore.languages import in_language_of
from petstore.sentences import Sentence, shown
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
    # One digest mail per attempt, however many deliveries it carries.
    attempts_counted = metrics.EMAIL_DELIVERIES

    def targets(self, events: Sequence[OwnerEvent]) -> Iterable[tuple[OwnerEvent, int]]:
        # Every event, to every mailed member: one a member did not choose is skipped when
        # it is due, so the outbox is also the record of what was (not) said.
        mailed = _mailed({event.project_id for event in events})
        return [(event, pk) for event in events for pk in mailed.get(event.project_id, [])]

    def choose(
        self, deliveries: list[Delivery], now: datetime
    ) -> tuple[list[Delivery], list[Delivery]]:
        member = _recipient(deliveries)
        if member is None or not member.user.email:
            return [], deliveries
        chosen = NotificationPreference.objects.email_events_of(member.user_id)
        told = set(
            Delivery.objects.filter(
                channel=self.name,
                target_id=member.pk,
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
        member = _recipient(deliveries)
        if member is None:  # removed since `choose`: nothing is sent to them
            gone = Sentence(gettext_noop("no longer a member"))
            return Outcome(ok=True, response=gone.english(), said=gone)
        events = [delivery.event for delivery in deliveries]
        with in_language_of(member.user):
            message = digest_message(project=member.project, events=events, to=member.user.email)
        started = time.monotonic()
        try:
            message.send()
        except (smtplib.SMTPException, OSError) as exc:
            took = round((time.monotonic() - started) * 1000)
            return Outcome(ok=False, duration_ms=took, response=describe(exc))
        return Outcome(ok=True, duration_ms=round((time.monotonic() - started) * 1000))


def _mailed(project_ids: set[int]) -> dict[int, list[int]]:
    """The memberships mailed each project's events, by project."""
    found: dict[int, list[int]] = {}
    rows = Membership.objects.filter(project_id__in=project_ids, role__in=MAILED_ROLES)
    for project_id, pk in rows.order_by("pk").values_list("project_id", "pk"):
        found.setdefault(project_id, []).append(pk)
    return found


def _recipient(deliveries: list[Delivery]) -> Membership | None:
    """The member the deliveries are for, if they are one still, of a role mailed."""
    found = Membership.objects.select_related("user", "project")
    return found.filter(pk=deliveries[0].target_id, role__in=MAILED_ROLES).first()


# --- The messages ------------------------------------------------------------------


def dashboard_url(path: str) -> str:
    """The absolute address of a dashboard page: https on DASHBOARD_HOST, plain http on
    the development port under DEBUG."""
    if settings.DEBUG:
        return f"http://{settings.DASHBOARD_HOST}:{settings.HTTP_PORT}{path}"
    port = "" if settings.HTTPS_PORT == 443 else f":{settings.HTTPS_PORT}"
    return f"https://{settings.DASHBOARD_HOST}{port}{path}"


def when(value: datetime | str | None) -> str:
    """A time as the reader's language writes it (petstore/formats/), in UTC, saying so."""
    if not value:
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return f"{formats.date_format(timezone.localtime(moment), 'DATETIME_FORMAT')} UTC"


def next_step(type: str) -> str:
    """What the owner should do after an event of `type`, in the reader's language (the
    outbox row keeps the English sentence, for the webhooks)."""
    return render_to_string("domains/copy/event_next_step.txt", {"type": type}).strip()


def _item(event: OwnerEvent) -> dict[str, Any]:
    data, said = event.data, event.said or {}
    findings = data.get("findings", [])
    kept = said.get("findings") or [None] * len(findings)
    return {
        "type": event.type,
        "label": EventType(event.type).label,
        "hostname": event.hostname,
        "occurred_at": when(event.occurred_at),
        "what": shown(data.get("what", ""), said.get("what")),
        "what_to_do": next_step(event.type),
        "url": dashboard_url(data.get("path", "/dashboard/")),
        "stops_serving_at": when(data.get("stops_serving_at")),
        "expires_at": when(data.get("expires_at")),
        "reason": shown(data.get("reason", ""), said.get("reason")),
        "findings": [
            shown(finding["message"], sentence)
            for finding, sentence in zip(findings, kept, strict=False)
        ],
    }


def subject(project: Project, events: list[OwnerEvent]) -> str:
    if len(events) == 1:
        event = events[0]
        return f"{event.hostname}: {EventType(event.type).label}"
    return ngettext(
        "%(count)d update about the domains of %(project)s",
        "%(count)d updates about the domains of %(project)s",
        len(events),
    ) % {"count": len(events), "project": project.slug}


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
    """Tell the project's mailed members once that an endpoint was disabled (the conditional
    UPDATE that disabled it decided once); a mail server that is down costs the mail, not
    the change."""
    endpoint = WebhookEndpoint.objects.select_related("project").get(pk=endpoint_id)
    project = endpoint.project
    mailed = Membership.objects.filter(project=project, role__in=MAILED_ROLES)
    # One mail per address, in its account's language: members do not see each other's
    # addresses.
    to = {member.user.email: member.user for member in mailed.select_related("user")}
    name = project.name or project.slug
    for address, user in sorted((a, u) for a, u in to.items() if a):
        with in_language_of(user):
            context = {
                "project": name,
                "url": endpoint.url,
                "since": when(endpoint.failing_since),
                "settings_url": dashboard_url("/dashboard/settings/notifications/"),
            }
            text = render_to_string("notifications/webhook_disabled.txt", context)
            subject = _("[%(project)s] Webhook endpoint disabled") % {"project": name}
        try:
            send_mail(subject, text, None, [address])
        except (smtplib.SMTPException, OSError):
            log.exception("mailing a member of %s about a disabled webhook failed", project.slug)
