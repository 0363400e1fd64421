"""What the dashboard shows, shaped for templates and the live-status JSON.

Presentation only: reads models and services, never writes.
"""

from __future__ import annotations

import json

from domains import services
from domains.forms import DomainAddForm, PrimaryForm, RedirectForm
from domains.models import Domain, Project, Redirect

# The words on the badges, and one line saying what each state means for the owner.
STATE_HELP = {
    "pending": "Waiting for the DNS record. Create it, then choose Verify.",
    "verified": "The DNS record is right and the domain is live. A certificate is on its way.",
    "issuing": "The domain is live. The certificate authority is issuing its certificate.",
    "active": "Live with a certificate.",
    "failed": "Verification failed. Fix the DNS record as described, then choose Re-verify.",
}
BADGE_LABELS = {
    "pending": "Pending",
    "verified": "Verified",
    "issuing": "Certificate issuing",
    "active": "Active",
    "failed": "Failed",
}
# The audit trail's verbs in plain words; unknown verbs show as they are.
ACTION_LABELS = {
    "added": "Added the domain",
    "verify_requested": "Chose Verify",
    "reverify_requested": "Chose Re-verify",
    "verified": "Verification passed",
    "verifies_again": "Verifies again",
    "check_failed": "Check failed",
    "failed": "Verification failed",
    "stopped_verifying": "Stopped verifying",
    "certificate_requested": "Certificate requested",
    "certificate_issued": "Certificate issued",
    "certificate_blocked": "Certificate blocked",
    "certificate_renewed": "Certificate renewed",
    "renewal_blocked": "Renewal blocked",
    "removed": "Removed the domain",
    "primary_set": "Set the primary domain",
    "redirect_saved": "Saved a redirect",
    "redirect_deleted": "Deleted a redirect",
}
# States in which the page keeps polling: something is expected to change by itself.
_MOVING_STATES = {"pending", "verified", "issuing"}


def check_in_progress(domain: Domain) -> bool:
    """A Verify / Re-verify was requested and no check has finished since."""
    requested = (
        domain.events.filter(action__in=["verify_requested", "reverify_requested"])
        .order_by("-created_at", "-pk")
        .first()
    )
    if requested is None:
        return False
    return domain.checked_at is None or domain.checked_at < requested.created_at


def domain_status_payload(domain: Domain) -> dict:
    certificate = domain.certificate
    in_progress = check_in_progress(domain)
    checked_at = domain.checked_at.isoformat() if domain.checked_at else None
    # Refused by CAA: nothing moves until the owner changes the record and chooses Re-verify.
    blocked = domain.cert_state == "blocked" and certificate is None
    fingerprint = "|".join(
        [
            domain.state,
            domain.cert_state,
            domain.check_code or "",
            checked_at or "",
            certificate.serial if certificate else "",
            "checking" if in_progress else "",
        ]
    )
    return {
        "hostname": domain.hostname,
        "state": domain.state,
        "state_label": BADGE_LABELS.get(domain.state, domain.get_state_display()),
        "state_help": (
            "The domain is live, but the certificate authority may not issue its certificate: "
            "see Certificate below."
            if blocked
            else STATE_HELP.get(domain.state, "")
        ),
        "certificate_blocked": blocked,
        "check_code": domain.check_code,
        "check_message": domain.check_message,
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
        "live": in_progress or (domain.state in _MOVING_STATES and not blocked),
        "fingerprint": fingerprint,
    }


def dns_position(domain: Domain) -> str:
    """Where the record to create goes on the domain's page: first while it is what the
    owner came for, after the status once a check said what is wrong, last once live."""
    if domain.state not in ("pending", "failed"):
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
    targets = {entry.from_domain_id: entry.to_domain for entry in redirects}
    domains = list(project.domains.order_by("hostname"))
    for domain in domains:
        # Shown on the domain's row; one query for all rows, not one per row.
        domain.redirect_target = targets.get(domain.pk)
    structure = services.project_domains_structure(project=project)
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
        "events": project.events.select_related("actor").order_by("-created_at", "-pk")[:20],
    }
