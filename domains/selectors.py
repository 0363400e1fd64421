"""Reads of the domains feature that screens, commands and services share.

Selectors read and never write or queue (services in domains/services/ do that). A
read that names a set of rows is a queryset method (domains/querysets.py); what a
single row says of itself is a model property (`Domain.stops_serving_at`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db.models import F, Max, Min, Q, QuerySet

from domains.channels.email import EmailChannel
from domains.channels.webhooks import WebhookChannel
from domains.choices import CertCode, CheckCode, DeliveryState
from domains.dns.hostnames import registrable_domain
from domains.models import (
    Delivery,
    Domain,
    NotificationPreference,
    OwnerEvent,
    Project,
    ProvenHostname,
    Redirect,
    WebhookEndpoint,
)

# --- Who may have a host name ------------------------------------------------------
#
# Several projects may claim one host name; at most one claim is live (a database
# constraint). A name nobody else holds or held verifies with its CNAME (or ALIAS) alone,
# as the spec describes. A name is *contested* for a project when another project claims
# it now, or has proven any name of the same registrable domain (a proof outlives Remove
# and the deletion of a project or an account): then the claim must also prove control
# with a TXT record carrying its own token. A TXT proof takes the name from a live claim
# that does not prove it too (services/claims.py); a rival's mere claim never takes
# a live domain offline.


def contested_claims(claims: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
    """The (hostname, project id) pairs among `claims` that need a TXT proof."""
    claims = list(claims)
    if not claims:
        return set()
    hosts = {host for host, _ in claims}
    holders: dict[str, set[int]] = defaultdict(set)
    for host, project_id in Domain.objects.filter(hostname__in=hosts).values_list(
        "hostname", "project_id"
    ):
        holders[host].add(project_id)
    registrable = {host: registrable_domain(host) for host in hosts}
    # The lowest and highest id of the projects that proved a name of each registrable
    # domain: another project than the claimant's proved one unless both are its id. Two
    # numbers per domain from the (registrable_domain, project_id) index, however many names
    # a project proved there (a proof row per name, kept for ever).
    provers = {
        domain: (lowest, highest)
        for domain, lowest, highest in ProvenHostname.objects.filter(
            registrable_domain__in=set(registrable.values())
        )
        .values("registrable_domain")
        .annotate(lowest=Min("project_id"), highest=Max("project_id"))
        .values_list("registrable_domain", "lowest", "highest")
        .order_by()
    }
    return {
        (host, project_id)
        for host, project_id in claims
        if holders[host] - {project_id}
        or provers.get(registrable[host], (project_id, project_id)) != (project_id, project_id)
    }


def is_contested(domain: Domain) -> bool:
    return bool(contested_claims([(domain.hostname, domain.project_id)]))


def rival_claims(domain: Domain) -> list[Domain]:
    """Other projects' claims on the same name."""
    return list(
        Domain.objects.filter(hostname=domain.hostname)
        .exclude(pk=domain.pk)
        .select_related("project")
        .order_by("pk")
    )


# --- What a domain's pages show ----------------------------------------------------


def domain_troubleshoot(*, domain: Domain) -> dict[str, Any]:
    """The spec's troubleshooting steps, from what the last checks stored (a page never
    asks the DNS itself): does it still verify? does CAA block the certificate? did the
    CA refuse the order, and why?"""
    refused = domain.cert_code == CertCode.CA_REFUSED
    return {
        "verifies": domain.check_code == CheckCode.OK,
        "verify_message": domain.check_message_shown,
        "checked_at": domain.checked_at,
        "caa_blocks": domain.cert_code == CheckCode.CAA_BLOCKED,
        "caa_message": "" if refused else domain.cert_message_shown,
        "ca_refused": refused,
        # The CA's own words ("The CA refused the order: ..."), as the order left them.
        "ca_refused_message": domain.cert_message_shown if refused else "",
    }


def removal_effects(domain: Domain) -> dict[str, Any]:
    """What Remove changes besides the domain itself: the redirects that go with it, and
    whether the project loses its primary domain (the confirmation lists both)."""
    redirects = Redirect.objects.filter(Q(from_domain=domain) | Q(to_domain=domain))
    return {
        "redirects": list(redirects.select_related("from_domain", "to_domain")),
        "is_primary": domain.project.primary_domain_id == domain.pk,
    }


def project_domains_structure(*, project: Project) -> dict[str, Any]:
    """The spec's `domains` structure: the primary domain and the redirect entries."""
    primary = project.primary_domain.hostname if project.primary_domain else None
    redirects = project.redirects.select_related("from_domain", "to_domain")
    return {"primary": primary, "redirects": [r.as_dict() for r in redirects]}


# --- Webhooks ----------------------------------------------------------------------


def webhook_endpoints(project: Project) -> QuerySet[WebhookEndpoint]:
    """The project's endpoints, oldest first (the secret is a column: never show it)."""
    return WebhookEndpoint.objects.filter(project=project).order_by("created_at", "pk")


def webhook_deliveries(endpoint: WebhookEndpoint) -> QuerySet[Delivery]:
    """An endpoint's delivery log, newest first, with each delivery's event and attempts."""
    return (
        Delivery.objects.filter(channel=WebhookChannel.name, target_id=endpoint.pk)
        .select_related("event")
        .prefetch_related("attempt_log")
        .order_by("-created_at", "-pk")
    )


# --- Email -------------------------------------------------------------------------


def email_choices(user_id: int) -> frozenset[str]:
    """The event types this user receives by email (their choice, or the default)."""
    return NotificationPreference.objects.email_events_of(user_id)


def domain_last_told(domain: Domain) -> OwnerEvent | None:
    """The domain's last event mailed to its owner, with `told_at`, when it was mailed."""
    mailed = OwnerEvent.objects.filter(
        domain=domain,
        deliveries__channel=EmailChannel.name,
        deliveries__state=DeliveryState.DELIVERED,
    )
    return mailed.annotate(told_at=F("deliveries__finished_at")).order_by("-told_at", "-pk").first()
