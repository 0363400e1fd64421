"""What the dashboard shows, shaped for templates and the live-status JSON.

Presentation only: reads models and selectors, never writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from django.template.loader import render_to_string
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from domains.choices import AWAITING_OWNER_STATES, MOVING_STATES, SECURITY_ACTIONS, CertState
from domains.dashboard.forms import DomainAddForm, PrimaryForm, RedirectForm
from domains.models import Domain, Project, Redirect
from domains.selectors import project_domains_structure


@dataclass(frozen=True)
class Badge:
    """The badge beside a domain's name: a CSS key, its word, and the sentence that goes
    with it (the same words on the badge's hover and beside it, so they never disagree)."""

    key: str
    label: str
    help: str


def badge(domain: Domain) -> Badge:
    stops_at = domain.stops_serving_at()
    if stops_at is not None and domain.failing_since is not None:
        return Badge(
            "failing",
            _("Failing"),
            _(
                "Still served, but its DNS record stopped pointing here on %(since)s UTC. It "
                "stops serving on %(stops)s UTC unless the record is fixed."
            )
            % {"since": _datetime(domain.failing_since), "stops": _datetime(stops_at)},
        )
    return Badge(domain.state, domain.get_state_display(), state_help(domain.state))


def _datetime(value: datetime) -> str:
    """A time as the reader's language writes it (petstore/formats/)."""
    return formats.date_format(timezone.localtime(value), "DATETIME_FORMAT")


def state_help(state: str) -> str:
    """What `state` means for the owner, in one sentence (templates/domains/copy/)."""
    return render_to_string("domains/copy/state_help.txt", {"state": state}).strip()


def domain_status_payload(domain: Domain) -> dict:
    certificate = domain.certificate
    in_progress = domain.check_in_progress
    checked_at = domain.checked_at.isoformat() if domain.checked_at else None
    stops_at = domain.stops_serving_at()
    shown = badge(domain)
    # Refused by CAA: nothing moves until the owner changes the record and chooses Re-verify.
    blocked = domain.cert_state == CertState.BLOCKED and certificate is None
    # While a check runs the page's live line says so ("Checking the DNS records now…");
    # this sentence stays the state's own, so the page says it once.
    if blocked and shown.key == domain.state:
        state_help = _(
            "The domain is live, but the certificate authority may not issue its certificate: "
            "see Certificate below."
        )
    else:
        state_help = shown.help
    fingerprint = "|".join(
        [
            domain.state,
            domain.cert_state,
            domain.check_code or "",
            shown.key,
            checked_at or "",
            certificate.serial if certificate else "",
            "checking" if in_progress else "",
        ]
    )
    return {
        "hostname": domain.hostname,
        "state": domain.state,
        "badge": shown.key,
        "state_label": shown.label,
        "state_help": state_help,
        "stops_serving_at": stops_at.isoformat() if stops_at else None,
        "certificate_blocked": blocked,
        "check_code": domain.check_code,
        "check_message": domain.check_message_shown,
        "checked_at": checked_at,
        "check_in_progress": in_progress,
        "certificate": (
            {
                "serial": certificate.serial,
                "not_before": certificate.not_before.isoformat(),
                "not_after": certificate.not_after.isoformat(),
            }
            if certificate
            else None
        ),
        # Keep polling while a check runs or the domain is on its way to active.
        "live": in_progress or (domain.state in MOVING_STATES and not blocked),
        "fingerprint": fingerprint,
    }


def domain_activity(domain: Domain) -> dict:
    """A domain's Activity in two parts: the security lines (SECURITY_ACTIONS: a rival, a
    takeover, a stop, a paused redirect) in a block of their own, and the feed of every
    other line, so no number of ordinary lines can push a security line out of sight."""
    events = domain.events.select_related("actor").order_by("-created_at", "-pk")
    return {
        "security_events": events.filter(action__in=SECURITY_ACTIONS)[:20],
        "events": events.exclude(action__in=SECURITY_ACTIONS)[:50],
    }


def dns_position(domain: Domain) -> str:
    """Where the record to create goes on the domain's page: first while it is what the
    owner came for, after the status once a check said what is wrong, last once live."""
    if domain.state not in AWAITING_OWNER_STATES:
        return "bottom"
    return "after_status" if domain.checked_at else "top"


def project_page_context(
    project: Project,
    *,
    add_form: DomainAddForm | None = None,
    primary_form: PrimaryForm | None = None,
) -> dict:
    redirects = list(
        Redirect.objects.filter(project=project)
        .select_related("from_domain", "to_domain")
        .order_by("from_domain__hostname")
    )
    # Each row says where its domain redirects: read with the rows, not one query per row.
    domains = list(project.domains.select_related("redirect_from__to_domain").order_by("hostname"))
    structure = project_domains_structure(project=project)
    return {
        "project": project,
        "domains": domains,
        "redirects": redirects,
        "add_form": add_form or DomainAddForm(),
        "primary_form": primary_form
        or PrimaryForm(project=project, initial={"domain": project.primary_domain_id}),
        "redirect_form": RedirectForm(project=project),
        "structure_json": json.dumps({"domains": structure}, indent=2),
        "latest_deploy": project.latest_deploy,
        **project_activity(project),
    }


def project_activity(project: Project) -> dict:
    """The project's Activity (all its domains, removed ones too) in the same two parts as
    a domain's: its security lines, then the feed of the others."""
    events = project.events.select_related("actor").order_by("-created_at", "-pk")
    return {
        "security_events": events.filter(action__in=SECURITY_ACTIONS)[:20],
        "events": events.exclude(action__in=SECURITY_ACTIONS)[:20],
    }
