"""Certificate flows: request after verification, issue after a CAA check, renew.

These are the plain functions behind domains/tasks.py; tests call them directly.
They speak to the certificate authorities only through domains.pki's interface
(local CA or ACME, by DOMAINS_CA), in order, moving on from one to the next only
when it fails for a reason of its own (domains/services/fallback.py). Issuing and
renewing take one path (`_obtain`), told apart by a small strategy (`_Issuance`,
`_Renewal`). A
temporary failure raises `RetryLater` (a CAA lookup that timed out:
`TemporaryDNSError`; a CA that is not done: `pki.Pending`, with its
Retry-After; a CA that could not reach our edge to validate: `pki.NotReached`,
recorded on the Activity feed); a CA that refuses leaves its reason on the domain,
like a CAA block.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext_noop

from domains import metrics, pki
from domains.choices import Action, CaSkipReason, CertCode, CertState, CheckCode, State
from domains.dns.results import CheckResult
from domains.models import Certificate, Domain
from domains.pki import sealing
from domains.policy import RENEWAL_INFO_PER_RUN, RENEWAL_INFO_RETRY, RENEWAL_KEEPS_LEFT
from domains.retry import RetryLater
from domains.services import fallback
from domains.services.events import record_event
from domains.services.lifecycle import transition, update
from petstore.sentences import Sentence

log = logging.getLogger(__name__)


class TemporaryDNSError(RetryLater):
    """CAA could not be looked up; retry later (RFC 8659: never read it as permission)."""

    def __init__(self, result: CheckResult):
        super().__init__(result.message)
        self.result = result


def certificate_request(*, domain: Domain) -> bool:
    """Verified -> issuing; True if this call moved it (the caller queues the issuance)."""
    return transition(domain, State.ISSUING, **certificate_request_fields(timezone.now()))


def certificate_request_fields(now: datetime) -> dict[str, Any]:
    """What a certificate request writes beside the move to `issuing` (the check that
    verifies a domain writes them in its own transition, `verification._record_success`)."""
    return {
        "cert_state": CertState.REQUESTED,
        "cert_requested_at": now,
        "cert_code": "",
        "cert_message": "",
        "cert_said": None,
    }


def certificate_overdue(late_after: timedelta) -> timedelta:
    """How long after its request certificate work is late: the issue delay, plus
    `late_after` (domains.policy: CERT_LATE_AT_CHECK, cert_lost_at_sweep)."""
    return timedelta(seconds=settings.DOMAINS_CERT_ISSUE_DELAY) + late_after


def certificate_claim_if_late(
    *, domain: Domain, late_after: timedelta, now: datetime | None = None
) -> bool:
    """True when the domain's requested certificate is late and this call claimed its
    re-issue (the caller queues it): a conditional UPDATE on the request time it read, so a
    concurrent caller's claim wins and this one is False."""
    now, asked = now or timezone.now(), domain.cert_requested_at
    if asked is None or now - asked < certificate_overdue(late_after):
        return False
    claimed = Domain.objects.filter(
        pk=domain.pk, state=State.ISSUING, cert_requested_at=asked
    ).update(cert_requested_at=now)
    if claimed:
        domain.cert_requested_at = now
    return bool(claimed)


def certificate_issue(*, domain_id: int) -> Certificate | None:
    """Issue the certificate of a domain in the issuing state; safe to run twice. Each run
    takes the sweep's claim again when it starts (`cert_requested_at`, policy
    `cert_lost_at_sweep`), so work under way, however long its batch waited, is not taken
    for lost."""
    Domain.objects.filter(pk=domain_id, state=State.ISSUING).update(
        cert_requested_at=timezone.now()
    )
    domain = Domain.objects.filter(pk=domain_id).select_related("project").first()
    if domain is None or domain.state != State.ISSUING:
        return domain.certificate if domain else None
    return _obtain(domain, _Issuance())


# A certificate is renewed only for a domain whose DNS passed a check this recently.
RENEW_ONLY_CHECKED_WITHIN = timedelta(days=1)


def certificate_renew(
    *, domain_id: int, issued_before: datetime | None = None
) -> Certificate | None:
    """Replace an active domain's certificate once it reaches its renewal time (or, with
    `issued_before`, one issued before then: staff renewing now), if the domain still proves
    it points here (a passing check within the last day)."""
    domain = (
        Domain.objects.filter(pk=domain_id, state=State.ACTIVE).select_related("project").first()
    )
    if domain is None or not _needs_renewal(domain, issued_before):
        return None
    if not _recently_verified(domain):
        said = Sentence(
            gettext_noop(
                "Not renewed: the domain has not passed a DNS check in the last day. Fix the "
                "DNS record; renewal follows the next passing check."
            )
        )
        metrics.renewal_done("blocked")
        if domain.cert_message != said.english():
            _keep(domain, domain.check_code, said)
            record_event(domain=domain, action=Action.RENEWAL_BLOCKED, said=said)
        return None
    return _obtain(domain, _Renewal(issued_before))


class _Way(Protocol):
    """What differs between issuing a domain's first certificate and renewing it."""

    # The Activity line recorded with the stored certificate.
    action: Action

    def prefers(self, domain: Domain) -> list[str]:
        """The CAs (`pki.Authority.name`) to ask before the others, in order."""
        ...

    def waits_for(self, domain: Domain, unavailable: pki.Unavailable) -> bool:
        """Whether to wait for this CA (its Retry-After) rather than ask the next."""
        ...

    def wanted(self, domain: Domain) -> bool:
        """Still to do? Asked again under the row lock: a concurrent run may have done it."""
        ...

    def refused(self, domain: Domain, code: str, said: Sentence) -> None:
        """CAA or the CA said no: keep the reason on the domain."""
        ...

    def done(self, domain: Domain) -> None:
        """The row's own change beside the stored certificate, under the row lock."""
        ...

    def found_done(self, domain: Domain) -> Certificate | None:
        """What a run that finds the work no longer wanted returns."""
        ...


class _Issuance:
    action = Action.CERTIFICATE_ISSUED

    def prefers(self, domain: Domain) -> list[str]:
        return []

    def waits_for(self, domain: Domain, unavailable: pki.Unavailable) -> bool:
        return False  # the owner is waiting: any CA that can issue now

    def wanted(self, domain: Domain) -> bool:
        return domain.state == State.ISSUING

    def refused(self, domain: Domain, code: str, said: Sentence) -> None:
        _block(domain, code, said)

    def done(self, domain: Domain) -> None:
        if transition(domain, State.ACTIVE, cert_state=CertState.ISSUED):
            metrics.domain_active(domain)

    def found_done(self, domain: Domain) -> Certificate | None:
        return domain.certificate


class _Renewal:
    action = Action.CERTIFICATE_RENEWED

    def __init__(self, issued_before: datetime | None):
        self.issued_before = issued_before

    def prefers(self, domain: Domain) -> list[str]:
        current = domain.certificates.order_by("-not_after", "-pk").first()
        return [current.ca_directory] if current is not None else []

    def waits_for(self, domain: Domain, unavailable: pki.Unavailable) -> bool:
        """A rate limit of the CA that issued the current certificate is waited out while
        that certificate still has RENEWAL_KEEPS_LEFT after the CA's Retry-After."""
        current = domain.certificates.order_by("-not_after", "-pk").first()
        if current is None or unavailable.reason != CaSkipReason.RATE_LIMITED:
            return False
        after = timezone.now() + timedelta(seconds=unavailable.retry_after)
        return current.not_after - after >= RENEWAL_KEEPS_LEFT

    def wanted(self, domain: Domain) -> bool:
        return (
            domain.state == State.ACTIVE
            and _needs_renewal(domain, self.issued_before)
            and _recently_verified(domain)
        )

    def refused(self, domain: Domain, code: str, said: Sentence) -> None:
        """The current certificate stays; the reason the next one could not be issued is kept."""
        metrics.renewal_done("refused" if code == CertCode.CA_REFUSED else "blocked")
        blocked = Sentence(gettext_noop("Renewal blocked: %(reason)s"), {"reason": said})
        _keep(domain, code, blocked)
        record_event(domain=domain, action=Action.RENEWAL_BLOCKED, said=said)

    def done(self, domain: Domain) -> None:
        update(domain, cert_code="", cert_message="", cert_said=None)
        metrics.renewal_done("renewed")

    def found_done(self, domain: Domain) -> Certificate | None:
        return None


def _obtain(domain: Domain, way: _Way) -> Certificate | None:
    """The one path to a certificate: CAA, then the CA's `prepare` and `issue`, outside any
    transaction (the CA may take its time: an ACME order validated, finalized, polled), then
    the store in one short transaction under the domain's row lock, where no network call
    is made: the row is asked again whether the work is still wanted (a concurrent run may
    have stored it), and the issuance's move is the state table's conditional UPDATE."""
    asked = fallback.candidates(domain, prefer=way.prefers(domain))
    if asked.caa.temporary:
        raise TemporaryDNSError(asked.caa)
    if not asked.authorities:
        way.refused(domain, asked.caa.code, asked.caa.said)
        return None
    try:
        obtained = fallback.first_to_issue(domain, asked.authorities, way)
    except pki.NotReached as unreached:
        # Ours, not the owner's: said on the Activity feed, retried by the task's backoff.
        record_event(domain=domain, action=Action.CERTIFICATE_DELAYED, said=unreached.said)
        raise
    except pki.Refused as refused:
        # The CA's own words, as it gave them, quoted in the platform's.
        way.refused(domain, CertCode.CA_REFUSED, refused.said)
        return None
    with transaction.atomic():
        # The row lock makes a second, concurrent run wait and then see the work done.
        locked = _locked(domain.pk)
        if not way.wanted(locked):
            return way.found_done(locked)
        way.done(locked)
        certificate = _store(locked, obtained, action=way.action)
        obtained.authority.stored(locked)
        return certificate


def _locked(domain_id: int) -> Domain:
    """The domain's row, locked: a second, concurrent run waits, then sees it moved on."""
    return (
        Domain.objects.select_for_update(of=("self",), no_key=True)
        .select_related("project")
        .get(pk=domain_id)
    )


def _keep(domain: Domain, code: str, said: Sentence) -> None:
    """The certificate's last problem, in English and as a sentence (Domain.cert_said)."""
    update(domain, cert_code=code, cert_message=said.english(), cert_said=said.stored())


def _block(domain: Domain, code: str, said: Sentence) -> None:
    """Issuing -> verified with the reason no certificate could be issued."""
    if transition(
        domain,
        State.VERIFIED,
        cert_state=CertState.BLOCKED,
        cert_code=code,
        cert_message=said.english(),
        cert_said=said.stored(),
        cert_requested_at=None,
    ):
        record_event(domain=domain, action=Action.CERTIFICATE_BLOCKED, said=said)


def _store(domain: Domain, obtained: fallback.Obtained, *, action: Action) -> Certificate:
    """Store what the CA issued, its key sealed, and record `action` (inside the row lock)."""
    issued, authority = obtained.issued, obtained.authority
    certificate = Certificate.objects.create(
        domain=domain,
        serial=issued.serial,
        not_before=issued.not_before,
        not_after=issued.not_after,
        san=issued.san,
        pem=issued.pem,
        key_pem=sealing.seal(issued.key_pem),
        issuer=issued.issuer,
        ca_directory=authority.name,
        renew_after=obtained.renew_after,
    )
    record_event(
        domain=domain,
        action=action,
        said=Sentence(
            gettext_noop("Serial %(serial)s, valid until %(date)s, from %(ca)s"),
            {
                "serial": certificate.serial,
                "date": f"{certificate.not_after:%Y-%m-%d}",
                "ca": authority.label,
            },
        ),
    )
    if authority.name:
        metrics.acme_issued(authority.name, fallback=obtained.fallback)
    return certificate


def _recently_verified(domain: Domain) -> bool:
    return (
        domain.check_code == CheckCode.OK
        and domain.failing_since is None
        and domain.checked_at is not None
        and domain.checked_at >= timezone.now() - RENEW_ONLY_CHECKED_WITHIN
    )


def _needs_renewal(domain: Domain, issued_before: datetime | None = None) -> bool:
    latest = domain.certificates.order_by("-not_after").first()
    if latest is None or latest.renew_after <= timezone.now():
        return True
    return issued_before is not None and latest.created_at < issued_before


def certificates_due_for_renewal() -> list[int]:
    """Active domains whose latest certificate (as `_needs_renewal` reads it) has reached its
    renewal time, or that have none: an older certificate's time says nothing of it."""
    latest = Certificate.objects.filter(domain=OuterRef("pk")).order_by("-not_after", "-pk")
    return list(
        Domain.objects.filter(state=State.ACTIVE)
        .annotate(renew_after=Subquery(latest.values("renew_after")[:1]))
        .filter(Q(renew_after__isnull=True) | Q(renew_after__lte=timezone.now()))
        .values_list("pk", flat=True)
    )


def renewal_windows_refresh() -> int:
    """Read again the CA's renewal window of the served certificates whose time to ask
    has come (`renewal_info_at`), oldest question first, RENEWAL_INFO_PER_RUN at most, and
    return how many were asked. A window the CA moved earlier (before it revokes, RFC 9773
    §4.3.2) brings the renewal into it; a later one leaves it where it was, since renewing
    early costs nothing. Each CA is asked of the certificates it issued (`ca_directory`),
    outside any transaction; a CA that cannot be reached leaves every renewal time as it
    was, logged, and is asked again RENEWAL_INFO_RETRY later."""
    now = timezone.now()
    # A domain's served certificate (older ones no longer say when to renew).
    served = Certificate.objects.filter(domain=OuterRef("domain")).served()
    asked = list(
        Certificate.objects.filter(domain__state=State.ACTIVE, pk=Subquery(served.values("pk")[:1]))
        .filter(Q(renewal_info_at__isnull=True) | Q(renewal_info_at__lte=now))
        .order_by(F("renewal_info_at").asc(nulls_first=True), "pk")[:RENEWAL_INFO_PER_RUN]
    )
    if not asked:
        return 0
    for certificate, answer in _renewal_information(asked):
        if isinstance(answer, Exception):
            log.warning("The CA's renewal window for %s could not be read: %s", certificate, answer)
            fields: dict[str, Any] = {"renewal_info_at": now + RENEWAL_INFO_RETRY}
        else:
            fields = {"renewal_info_at": answer.ask_again_at or certificate.not_after}
            if answer.renew_at is not None and answer.renew_at < certificate.renew_after:
                fields["renew_after"] = answer.renew_at
        Certificate.objects.filter(pk=certificate.pk).update(**fields)
    return len(asked)


def _renewal_information(
    certificates: list[Certificate],
) -> list[tuple[Certificate, pki.RenewalInfo | Exception]]:
    """Each certificate's renewal window, read from the CA that issued it (one connection per
    CA); a CA no longer configured has nothing to say of its certificates (an error each)."""
    by_ca: dict[str, list[Certificate]] = {}
    for certificate in certificates:
        by_ca.setdefault(certificate.ca_directory, []).append(certificate)
    read: list[tuple[Certificate, pki.RenewalInfo | Exception]] = []
    for name, issued in by_ca.items():
        authority = pki.authorities(prefer=[name])[0]
        if name and authority.name != name:
            gone = LookupError(f"{name} is no longer one of the configured CAs")
            read += [(certificate, gone) for certificate in issued]
            continue
        answers = authority.renewal_information([certificate.pem for certificate in issued])
        read += zip(issued, answers, strict=True)
    return read
