"""Who may have a host name: claims, contested names, proofs and takeovers.

Several projects may claim one host name; at most one claim is live (a database
constraint). A name nobody else holds or held verifies with its CNAME (or ALIAS) alone,
as the spec describes. A name is *contested* for a project when another project claims
it now, or has proven any name of the same registrable domain (a proof outlives Remove
and the deletion of a project or an account): then the claim must also prove control
with a TXT record carrying its own token. A TXT proof takes the name from a live claim
that does not prove it too; a rival's mere claim never takes a live domain offline.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from contextlib import AbstractContextManager

from domains.dns.hostnames import registrable_domain
from domains.models import Domain, ProvenHostname
from domains.services.bulk import BulkInsert

_proofs = BulkInsert(ProvenHostname.objects, "proofs")


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
    provers: dict[str, set[int]] = defaultdict(set)
    proofs = ProvenHostname.objects.filter(
        registrable_domain__in={registrable_domain(host) for host in hosts}
    ).values_list("registrable_domain", "project_id")
    for registrable, project_id in proofs.distinct():
        provers[registrable].add(project_id)
    return {
        (host, project_id)
        for host, project_id in claims
        if holders[host] - {project_id} or provers[registrable_domain(host)] - {project_id}
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


def record_proof(domain: Domain, *, by_txt: bool) -> None:
    """The domain's project proved control of its name (the claim went live)."""
    proof = ProvenHostname(
        hostname=domain.hostname,
        registrable_domain=registrable_domain(domain.hostname),
        project_id=domain.project_id,
        owner_id=domain.project.owner_id,
        by_txt=by_txt,
    )
    _proofs.save(proof)


def proofs_in_bulk() -> AbstractContextManager[list[ProvenHostname]]:
    """Collect the proofs recorded inside and insert them with one INSERT at the end (a
    sweep's batch verifies up to a hundred domains at once)."""
    return _proofs.in_bulk()
