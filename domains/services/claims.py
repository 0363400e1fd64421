"""Claims on a host name and proofs of control.

A claim that goes live records a proof (`ProvenHostname`), which keeps the name
contested for every other project (domains.selectors.contested_claims says when a claim
needs a TXT proof). A claim on a contested name goes live only with its TXT proof, and
that proof takes the name from another project's live claim (`claim_result`); a rival's
mere claim never takes a live domain offline. Recording a check
(domains/services/verification.py) asks here before a claim goes live.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace

from django.utils.translation import gettext_noop

from domains.choices import LIVE_STATES, Action, CheckCode, State
from domains.dns.hostnames import registrable_domain
from domains.dns.results import CheckResult
from domains.models import Domain, ProvenHostname
from domains.services import redirects
from domains.services.bulk import BulkInsert
from domains.services.events import record_event
from domains.services.lifecycle import transition
from petstore.sentences import Sentence

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


def claim_result(domain: Domain, result: CheckResult, *, contested: bool) -> CheckResult:
    """The DNS points at the platform: may this claim go live? Its result, or why not.

    A contested name needs the claim's TXT proof; a proven claim takes the name from a
    live claim of another project unless that one's token is in the TXT record too.
    """
    if not contested:
        # Nobody else claims the name (a claim added since is caught by the constraint).
        return result
    if domain.verification_token not in result.txt:
        return ownership_required(domain, result)
    holder = (
        Domain.objects.select_for_update(of=("self",), no_key=True)
        .select_related("project")
        .filter(hostname=domain.hostname, state__in=LIVE_STATES)
        .exclude(pk=domain.pk)
        .first()
    )
    if holder is None:
        return result
    if holder.verification_token in result.txt:
        return replace(
            result,
            code=CheckCode.PROVEN_ELSEWHERE,
            said=Sentence(
                gettext_noop(
                    "The TXT record %(name)s also proves another project's claim on this "
                    "name, which is live there. Remove that project's value from the record, "
                    "keep this one's, then choose Verify."
                ),
                {"name": domain.ownership_txt_name},
            ),
        )
    _take_from(holder, domain)
    return result


def ownership_required(domain: Domain, result: CheckResult) -> CheckResult:
    return replace(
        result,
        code=CheckCode.OWNERSHIP_REQUIRED,
        said=Sentence(
            gettext_noop(
                "%(hostname)s points to the platform, but another project claims this name or "
                "has claimed it before. Prove it is yours: add the TXT record %(name)s with "
                "the value %(token)s, then choose Verify."
            ),
            {
                "hostname": domain.hostname_unicode,
                "name": domain.ownership_txt_name,
                "token": domain.verification_token,
            },
        ),
        expected=f"TXT {domain.ownership_txt_name} {domain.verification_token}",
        found="; ".join(f"TXT {text}" for text in result.txt),
    )


def _take_from(holder: Domain, winner: Domain) -> None:
    """The winner proved control with its TXT record: the holder stops serving at once."""
    said = Sentence(
        gettext_noop(
            "Another project proved control of %(hostname)s with a TXT record, so the name is "
            "served there now and no longer here. If the name is yours, add this project's TXT "
            "record and choose Re-verify."
        ),
        {"hostname": holder.hostname_unicode},
    )
    lost = {"check_message": said.english(), "check_said": {"message": said.stored()}}
    if transition(holder, State.LOST, next_check_at=None, **lost):
        record_event(domain=holder, action=Action.LOST, said=said)
        redirects.redirects_follow_target(target=holder)
        record_event(
            domain=winner,
            action=Action.TOOK_OVER,
            said=Sentence(
                gettext_noop("%(hostname)s was live for another project until now."),
                {"hostname": winner.hostname_unicode},
            ),
        )
