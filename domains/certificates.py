"""Certificate flows: request after verification, issue after a CAA check, renew, sweep.

These are the plain functions behind domains/tasks.py; tests call them directly.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from domains import ca, checks
from domains.events import record_event
from domains.models import Certificate, Domain
from domains.states import CertState, State, transition

# A requested certificate not issued after the issue delay plus this is re-queued.
LOST_TASK_GRACE = timedelta(minutes=5)
# How long the sweep's claim on a due check lasts before it is due again.
SWEEP_LEASE = timedelta(minutes=5)
# Domains per batch task: enough to overlap their DNS round trips, small enough to
# keep a task short and its memory flat (see docs/decisions/domain-sweep.md).
BATCH_SIZE = 100
# Primary keys per claiming UPDATE (keeps the statement's parameter list modest).
CLAIM_CHUNK = 1000
# Most checks one sweep claims (the most overdue first); the rest wait for the next
# minute's sweep, so a backlog never makes one sweep (or its memory) unbounded.
SWEEP_LIMIT = 50_000


class TemporaryDNSError(Exception):
    """CAA could not be looked up; retry later (RFC 8659: never read it as permission)."""

    def __init__(self, result: checks.CheckResult):
        super().__init__(result.message)
        self.result = result


def certificate_request(*, domain: Domain, queue: bool = True) -> bool:
    """Verified -> issuing, and queue the issue task after the simulated CA delay.

    `queue=False` is for callers that queue the issue tasks themselves (`queue_issue`).
    """
    if not transition(domain, State.ISSUING, **certificate_request_fields(timezone.now())):
        return False
    if queue:
        queue_issue([domain.pk])
    return True


def certificate_request_fields(now) -> dict:
    """What a certificate request writes beside the move to `issuing` (the check that
    verifies a domain writes them in its own transition, `verification._record_success`)."""
    return {
        "cert_state": CertState.REQUESTED,
        "cert_requested_at": now,
        "cert_code": "",
        "cert_message": "",
    }


def queue_issue(domain_ids: list[int]) -> None:
    """After commit, queue issuance after the simulated CA delay: one task, or batches."""
    from domains import tasks

    if not domain_ids:
        return
    ids, delay = list(domain_ids), settings.DOMAINS_CERT_ISSUE_DELAY

    def enqueue():
        if len(ids) == 1:
            tasks.issue_certificate.apply_async((ids[0],), countdown=delay)
            return
        for chunk in chunked(ids, BATCH_SIZE):
            tasks.issue_certificates.apply_async((chunk,), countdown=delay)

    transaction.on_commit(enqueue)


def chunked(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def certificate_requeue_if_late(*, domain: Domain) -> bool:
    """Queue the issue task again when the requested certificate is overdue."""
    from domains import tasks

    now, asked = timezone.now(), domain.cert_requested_at
    overdue = timedelta(seconds=settings.DOMAINS_CERT_ISSUE_DELAY) + timedelta(minutes=1)
    if asked is None or now - asked < overdue:
        return False
    claimed = Domain.objects.filter(
        pk=domain.pk, state=State.ISSUING, cert_requested_at=asked
    ).update(cert_requested_at=now)
    if claimed:
        domain_id = domain.pk
        transaction.on_commit(lambda: tasks.issue_certificate.delay(domain_id))
    return bool(claimed)


def certificate_issue(*, domain_id: int) -> Certificate | None:
    """Issue the certificate of a domain in the issuing state; safe to run twice."""
    domain = Domain.objects.filter(pk=domain_id).select_related("project").first()
    if domain is None or domain.state != State.ISSUING:
        return domain.certificate if domain else None
    result = _caa(domain)
    if not result.ok:
        if transition(
            domain,
            State.VERIFIED,
            cert_state=CertState.BLOCKED,
            cert_code=result.code,
            cert_message=result.message,
            cert_requested_at=None,
        ):
            record_event(
                project=domain.project,
                domain=domain,
                action="certificate_blocked",
                message=result.message,
            )
        return None
    with transaction.atomic():
        # The row lock makes a second, concurrent run wait and then see `active`.
        locked = Domain.objects.select_for_update().get(pk=domain_id)
        if locked.state != State.ISSUING:
            return locked.certificate
        transition(locked, State.ACTIVE, cert_state=CertState.ISSUED)
        certificate = _store(locked, project=domain.project, action="certificate_issued")
    return certificate


def _caa(domain: Domain) -> checks.CheckResult:
    """The CAA answer for issuing or renewing; a temporary failure raises (retry later)."""
    result = checks.caa(domain.hostname)
    if result.temporary:
        raise TemporaryDNSError(result)
    return result


def _store(domain: Domain, *, project, action: str) -> Certificate:
    """Issue with the CA, store the certificate and record `action` (inside the row lock)."""
    issued = ca.issue(domain.hostname, now=timezone.now())
    certificate = Certificate.objects.create(
        domain=domain,
        serial=issued.serial,
        not_before=issued.not_before,
        not_after=issued.not_after,
        san=issued.san,
        pem=issued.pem,
        key_pem=issued.key_pem,
    )
    record_event(
        project=project,
        domain=domain,
        action=action,
        message=f"Serial {certificate.serial}, valid until {certificate.not_after:%Y-%m-%d}",
    )
    return certificate


def renew_before() -> timedelta:
    return timedelta(days=settings.DOMAINS_CERT_RENEW_BEFORE_DAYS)


def certificate_renew(*, domain_id: int) -> Certificate | None:
    """Replace an active domain's certificate that expires within the renewal margin."""
    domain = Domain.objects.filter(pk=domain_id, state=State.ACTIVE).first()
    if domain is None or not _needs_renewal(domain):
        return None
    result = _caa(domain)
    if not result.ok:
        Domain.objects.filter(pk=domain.pk).update(
            cert_code=result.code, cert_message=f"Renewal blocked: {result.message}"
        )
        record_event(
            project=domain.project,
            domain=domain,
            action="renewal_blocked",
            message=result.message,
        )
        return None
    with transaction.atomic():
        locked = Domain.objects.select_for_update().get(pk=domain_id)
        if locked.state != State.ACTIVE or not _needs_renewal(locked):
            return None
        Domain.objects.filter(pk=domain_id).update(cert_code="", cert_message="")
        certificate = _store(locked, project=domain.project, action="certificate_renewed")
    return certificate


def _needs_renewal(domain: Domain) -> bool:
    latest = domain.certificates.order_by("-not_after").first()
    return latest is None or latest.not_after <= timezone.now() + renew_before()


def certificates_due_for_renewal() -> list[int]:
    """Active domains whose latest certificate (if any) ends within the renewal margin."""
    threshold = timezone.now() + renew_before()
    latest = Domain.objects.filter(state=State.ACTIVE).annotate(
        latest=Max("certificates__not_after")
    )
    return list(
        latest.filter(Q(latest__isnull=True) | Q(latest__lte=threshold)).values_list(
            "pk", flat=True
        )
    )


def sweep() -> dict:
    """Queue every due check, re-queue lost certificate work. Run by beat every minute.

    Due domains are claimed in bulk by pushing their next_check_at forward by a lease:
    one SELECT ... FOR UPDATE SKIP LOCKED and UPDATEs by primary key in one transaction,
    so two sweeps never queue the same check; if a queued batch is lost, its domains are
    simply due again when the lease ends. Checks go out as batches of BATCH_SIZE.
    """
    from domains import tasks

    now = timezone.now()
    queued = {"checks": _claim_due_checks(now), "certificates": []}
    grace = timedelta(seconds=settings.DOMAINS_CERT_ISSUE_DELAY) + LOST_TASK_GRACE
    for pk, asked in Domain.objects.stuck_issuing(grace, now).values_list(
        "pk", "cert_requested_at"
    ):
        if Domain.objects.filter(pk=pk, cert_requested_at=asked).update(cert_requested_at=now):
            queued["certificates"].append(pk)
    for domain in Domain.objects.needing_certificate().filter(cert_state=CertState.NONE):
        certificate_request(domain=domain)  # queues its own task on commit

    def enqueue():
        for chunk in chunked(queued["checks"], BATCH_SIZE):
            tasks.check_domains.delay(chunk)
        for pk in queued["certificates"]:
            tasks.issue_certificate.delay(pk)

    transaction.on_commit(enqueue)
    return queued


def _claim_due_checks(now) -> list[int]:
    with transaction.atomic():
        due = list(
            Domain.objects.due_for_check(now)
            .select_for_update(skip_locked=True)
            .order_by("next_check_at", "pk")
            .values_list("pk", flat=True)[:SWEEP_LIMIT]
        )
        lease_end = now + SWEEP_LEASE
        for chunk in chunked(due, CLAIM_CHUNK):
            Domain.objects.filter(pk__in=chunk).update(next_check_at=lease_end)
    return due
