"""One project's events as one message: plain text and HTML, each from one template
(templates/notifications/digest.txt and .html; Django's autoescaping covers everything a
tenant typed, such as host names, in the HTML)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from domains.choices import EventType
from domains.models import OwnerEvent, Project


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
