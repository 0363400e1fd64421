"""Proofs of control: a claim that goes live records one (`ProvenHostname`), which keeps
the name contested for every other project (domains.selectors.contested_claims says
when a claim needs a TXT proof).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from domains.dns.hostnames import registrable_domain
from domains.models import Domain, ProvenHostname
from domains.services.bulk import BulkInsert

_proofs = BulkInsert(ProvenHostname.objects, "proofs")


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
