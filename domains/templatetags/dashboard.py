"""Small template helpers of the domains dashboard."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from domains.choices import Action
from domains.dashboard.presenters import badge
from domains.models import Domain

register = template.Library()


@register.simple_tag
def domain_badge(domain: Domain) -> SafeString:
    """A coloured badge with the domain's standing and, on hover, what it means."""
    shown = badge(domain)
    return format_html(
        '<span class="badge badge-{}" title="{}" data-state="{}">{}</span>',
        shown.key,
        shown.help,
        shown.key,
        shown.label,
    )


@register.filter
def actor_name(user) -> str:
    return user.get_username() if user else "system"


@register.filter
def action_label(action: str) -> str:
    if action in Action.values:
        return Action(action).label
    return action.replace("_", " ").capitalize()


@register.inclusion_tag("domains/_doctor.html")
def doctor_panel(domain: Domain) -> dict[str, Any]:
    """ "What the DNS says": each of the zone's own name servers, its answer and whether it
    agrees, the findings above them (domains/dns/doctor.py); the dashboard's domain page
    and the admin's domain show the same."""
    diagnosis = domain.check_diagnosis
    if not diagnosis:
        return {"diagnosis": None}
    return {
        "diagnosis": diagnosis,
        "asked_at": datetime.fromisoformat(diagnosis["checked_at"]),
        "hostname": domain.hostname_unicode,
    }
