"""The sweep: every minute, claim the checks that are due and find certificate work
that was asked for but never done. Run by beat through domains.tasks.sweep.

Due domains are claimed in bulk by pushing their next_check_at forward by a lease:
one SELECT ... FOR UPDATE SKIP LOCKED and UPDATEs by primary key in one transaction,
so two sweeps never claim the same check; if a queued batch is lost, its domains are
simply due again when the lease ends.

Every stage (dropping expired claims, claiming checks, re-queuing lost certificate
work, requesting certificates) handles at most SWEEP_LIMIT domains, the most overdue
first, and each domain in a savepoint of its own: a domain the database refuses is
logged with its id and counted in the task failures, and the rest go on, as in the
check batches (domains/services/verification.py). A stage that fails as a whole is
logged and counted too, and the sweep still returns what the other stages found, so
the checks it claimed are queued whatever became of the certificate work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from domains.choices import Action
from domains.models import Domain
from domains.policy import cert_lost_at_sweep, sweep_lease
from domains.services import certificates
from domains.services.events import record_event
from domains.services.nextsteps import NextSteps
from petstore.models import TaskFailure
from petstore.sentences import Sentence
from petstore.taskfailures import describe, task_failure_record

log = logging.getLogger(__name__)

# Domains per batch task: enough to overlap their DNS round trips, small enough to
# keep a task short and its memory flat (see docs/decisions/domain-sweep.md).
BATCH_SIZE = 100
# Primary keys per claiming UPDATE (keeps the statement's parameter list modest).
CLAIM_CHUNK = 1000
# Most domains one stage of one sweep handles (the most overdue first); the rest wait for
# the next minute's sweep, so a backlog never makes one sweep (or its memory) unbounded.
SWEEP_LIMIT = 50_000
# The name the sweep's failures are counted under (TaskFailure, the metrics).
FAILURE_NAME = f"{__name__}.sweep"

T = TypeVar("T")


def chunked(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def sweep() -> NextSteps:
    """Drop the claims that never verified in time, claim every due check and every piece
    of lost certificate work, and request the certificates not yet asked for; the caller
    queues what it returns (whatever one domain or one stage did)."""
    now = timezone.now()
    steps = NextSteps()
    _stage("expiring claims", lambda: claims_expire(now=now), 0)
    steps.checks = _stage("claiming checks", lambda: _claim_due_checks(now), [])
    steps.issue_now = _stage("re-queuing lost certificate work", lambda: _claim_lost(now), [])
    steps.issue = _stage("requesting certificates", _request_certificates, [])
    return steps


def claims_expire(*, now: datetime) -> int:
    """Drop the claims that never verified within DOMAINS_CLAIM_EXPIRY_DAYS, so a name
    nobody proved is never held by a stale claim; each leaves an Activity line."""
    cutoff = now - timedelta(days=settings.DOMAINS_CLAIM_EXPIRY_DAYS)
    expired = (
        Domain.objects.never_verified(older_than=cutoff)
        .select_related("project")
        .order_by("created_at", "pk")[:SWEEP_LIMIT]
    )
    return len(_each("expiring its claim", expired, _expire))


def _expire(domain: Domain) -> bool:
    deleted, _ = Domain.objects.filter(pk=domain.pk, verified_at__isnull=True).delete()
    if deleted:
        record_event(
            project=domain.project,
            hostname=domain.hostname,
            action=Action.EXPIRED,
            said=Sentence(
                gettext_noop(
                    "%(hostname)s never verified in %(days)d days, so the claim was dropped. "
                    "Add it again to start over."
                ),
                {"hostname": domain.hostname, "days": settings.DOMAINS_CLAIM_EXPIRY_DAYS},
            ),
        )
    return bool(deleted)


def _claim_lost(now: datetime) -> list[int]:
    """Certificate work requested long ago and never done (its task was lost)."""
    lost = (
        Domain.objects.stuck_issuing(certificates.certificate_overdue(cert_lost_at_sweep()), now)
        .only("pk", "cert_requested_at")
        .order_by("cert_requested_at", "pk")[:SWEEP_LIMIT]
    )
    return _each(
        "re-queuing its lost certificate work",
        lost,
        lambda domain: certificates.certificate_claim_if_late(
            domain=domain, late_after=cert_lost_at_sweep(), now=now
        ),
    )


def _request_certificates() -> list[int]:
    """Verified domains whose certificate was never requested."""
    wanted = Domain.objects.needing_certificate().order_by("verified_at", "pk")[:SWEEP_LIMIT]
    return _each(
        "requesting its certificate",
        wanted,
        lambda domain: certificates.certificate_request(domain=domain),
    )


def _claim_due_checks(now: datetime) -> list[int]:
    """Claim the due checks in one transaction, a chunk per UPDATE; a chunk the database
    refuses is claimed again a domain at a time, and the domain it refuses is left out."""
    refused: list[tuple[int, Exception]] = []
    with transaction.atomic():
        due = list(
            Domain.objects.due_for_check(now)
            .select_for_update(skip_locked=True, no_key=True)
            .order_by("next_check_at", "pk")
            .values_list("pk", flat=True)[:SWEEP_LIMIT]
        )
        lease_end = now + sweep_lease()
        claimed: list[int] = []
        for chunk in chunked(due, CLAIM_CHUNK):
            try:
                with transaction.atomic():
                    Domain.objects.filter(pk__in=chunk).update(next_check_at=lease_end)
                claimed += chunk
                continue
            except Exception:  # noqa: BLE001 - found again below, with its domain
                log.info("claiming %d due checks together failed; claiming one by one", len(chunk))
            for domain_id in chunk:
                try:
                    with transaction.atomic():
                        Domain.objects.filter(pk=domain_id).update(next_check_at=lease_end)
                except Exception as exc:  # noqa: BLE001 - this domain's failure alone
                    refused.append((domain_id, exc))
                    continue
                claimed.append(domain_id)
    for domain_id, error in refused:
        _domain_failed(domain_id, "claiming its check", error)
    return claimed


def _each(stage: str, domains: Iterable[Domain], work: Callable[[Domain], bool]) -> list[int]:
    """Run `work` for each domain in a savepoint of its own (in a transaction of its own
    when the sweep runs in none); the ids it did something for. A domain whose work raises
    is logged and counted, and the others go on."""
    done: list[int] = []
    for domain in domains:
        try:
            with transaction.atomic():
                if work(domain):
                    done.append(domain.pk)
        except Exception as exc:  # noqa: BLE001 - this domain's failure, not the sweep's
            _domain_failed(domain.pk, stage, exc)
    return done


def _stage(stage: str, run: Callable[[], T], nothing: T) -> T:
    """Run one stage of the sweep; if it fails as a whole (its query, say), it is logged
    and counted, and the sweep goes on with the next stage."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - one stage must not stop the others
        log.exception("sweep: %s failed", stage)
        task_failure_record(
            task_name=FAILURE_NAME, kind=TaskFailure.Kind.FAILED, error=f"{stage}: {describe(exc)}"
        )
        return nothing


def _domain_failed(domain_id: int, stage: str, exc: BaseException) -> None:
    """One domain's part of the sweep raised: logged with its id and counted; the sweep
    goes on, and finds the domain again next time."""
    log.error("sweep: domain %s failed while %s", domain_id, stage, exc_info=exc)
    task_failure_record(
        task_name=FAILURE_NAME,
        kind=TaskFailure.Kind.FAILED,
        error=f"domain {domain_id}, {stage}: {describe(exc)}",
    )
