"""The sweep: every minute, claim the checks that are due and find certificate work
that was asked for but never done. Run by beat through domains.tasks.sweep.

Due domains are claimed in bulk by pushing their next_check_at forward by a lease:
one SELECT ... FOR UPDATE SKIP LOCKED and UPDATEs by primary key in one transaction,
so two sweeps never claim the same check; if a queued batch is lost, its domains are
simply due again when the lease ends.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from domains.choices import Action
from domains.models import Domain
from domains.policy import cert_lost_at_sweep, sweep_lease
from domains.services import certificates
from domains.services.events import record_event
from domains.services.nextsteps import NextSteps

# Domains per batch task: enough to overlap their DNS round trips, small enough to
# keep a task short and its memory flat (see docs/decisions/domain-sweep.md).
BATCH_SIZE = 100
# Primary keys per claiming UPDATE (keeps the statement's parameter list modest).
CLAIM_CHUNK = 1000
# Most checks one sweep claims (the most overdue first); the rest wait for the next
# minute's sweep, so a backlog never makes one sweep (or its memory) unbounded.
SWEEP_LIMIT = 50_000


def chunked(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def sweep() -> NextSteps:
    """Claim every due check and every piece of lost certificate work, and drop the claims
    that never verified in time; the caller queues what it returns."""
    now = timezone.now()
    claims_expire(now=now)
    steps = NextSteps(checks=_claim_due_checks(now))
    lost = Domain.objects.stuck_issuing(certificates.certificate_overdue(cert_lost_at_sweep()), now)
    for domain in lost.only("pk", "cert_requested_at"):
        if certificates.certificate_claim_if_late(
            domain=domain, late_after=cert_lost_at_sweep(), now=now
        ):
            steps.issue_now.append(domain.pk)
    for domain in Domain.objects.needing_certificate():
        if certificates.certificate_request(domain=domain):
            steps.issue.append(domain.pk)
    return steps


def claims_expire(*, now: datetime) -> int:
    """Drop the claims that never verified within DOMAINS_CLAIM_EXPIRY_DAYS, so a name
    nobody proved is never held by a stale claim; each leaves an Activity line."""
    cutoff = now - timedelta(days=settings.DOMAINS_CLAIM_EXPIRY_DAYS)
    dropped = 0
    for domain in Domain.objects.never_verified(older_than=cutoff).select_related("project"):
        with transaction.atomic():
            deleted, _ = Domain.objects.filter(pk=domain.pk, verified_at__isnull=True).delete()
            if deleted:
                dropped += 1
                record_event(
                    project=domain.project,
                    hostname=domain.hostname,
                    action=Action.EXPIRED,
                    message=(
                        f"{domain.hostname} never verified in "
                        f"{settings.DOMAINS_CLAIM_EXPIRY_DAYS} days, so the claim was dropped. "
                        "Add it again to start over."
                    ),
                )
    return dropped


def _claim_due_checks(now: datetime) -> list[int]:
    with transaction.atomic():
        due = list(
            Domain.objects.due_for_check(now)
            .select_for_update(skip_locked=True, no_key=True)
            .order_by("next_check_at", "pk")
            .values_list("pk", flat=True)[:SWEEP_LIMIT]
        )
        lease_end = now + sweep_lease()
        for chunk in chunked(due, CLAIM_CHUNK):
            Domain.objects.filter(pk__in=chunk).update(next_check_at=lease_end)
    return due
