"""Small template helpers of the domains dashboard."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from domains import access
from domains.access import Permission
from domains.choices import Action
from domains.dashboard.presenters import badge
from domains.dns.asked import answer_shown
from domains.models import Domain

register = template.Library()


@register.filter
def allows(role: str | None, permission: str) -> bool:
    """`{% if project.role|allows:"domains.remove" %}`: a button is shown only to a role
    that may use it (domains/access.py). An unknown permission is a mistake in the template."""
    if permission not in Permission.values:
        raise template.TemplateSyntaxError(f"No permission {permission!r} (domains/access.py).")
    return access.allows(role, permission)


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
    return user.get_username() if user else _("system")


@register.filter
def action_label(action: str) -> str:
    if action in Action.values:
        return str(Action(action).label)
    return action.replace("_", " ").capitalize()


@register.inclusion_tag("domains/_doctor.html")
def doctor_panel(domain: Domain) -> dict[str, Any]:
    """ "What the DNS says": each of the zone's own name servers, its answer and whether it
    agrees, the findings above them (domains/dns/doctor.py); the dashboard's domain page
    and the admin's domain show the same."""
    diagnosis = domain.check_diagnosis
    if not diagnosis:
        return {"diagnosis": None}
    # Each finding in the reader's language (stored in English, and as a sentence).
    findings = [
        {**finding, "message": message}
        for finding, message in zip(diagnosis["findings"], domain.findings_shown, strict=True)
    ]
    servers = [
        server | {"answer": answer_shown(server["answer"])} for server in diagnosis["nameservers"]
    ]
    return {
        "diagnosis": {**diagnosis, "findings": findings, "nameservers": servers},
        # The summary above the rows is theirs: "all is well" only when every row is a ✓.
        "all_agree": all(server["agrees"] for server in servers),
        "asked_at": datetime.fromisoformat(diagnosis["checked_at"]),
        "hostname": domain.hostname_unicode,
    }
