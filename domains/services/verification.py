"""Recording what a DNS check found: the state moves, the backoff and the 48-hour window.

`domain_check` (one domain, now: Verify, `verifydomain`, the `check_domain` task) and
`domain_check_many` (the sweep's batches) ask the DNS first, outside any transaction,
then record every result through the same functions below, so a domain ends in the
same place whichever way it was checked. Both return what they recorded and the
certificate work it calls for (`Recorded.next_steps`), which the caller queues.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from domains.choices import AWAITING_OWNER_STATES, Action, CertState, CheckCode, State
from domains.dns import diagnosis
from domains.dns.diagnosis import CheckResult
from domains.models import Domain
from domains.services import certificates
from domains.services.events import events_in_bulk, record_event
from domains.services.lifecycle import transition, update
from domains.services.nextsteps import NextSteps

log = logging.getLogger(__name__)

# Re-check schedule for a domain that does not verify yet: the delay after the
# n-th failed check (then the last value for the rest of the window).
BACKOFF = (
    timedelta(minutes=1),
    timedelta(minutes=2),
    timedelta(minutes=5),
    timedelta(minutes=10),
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
)


def backoff_delay(failed_checks: int) -> timedelta:
    return BACKOFF[min(max(failed_checks, 1), len(BACKOFF)) - 1]


def recheck_interval() -> timedelta:
    return timedelta(hours=settings.DOMAINS_RECHECK_INTERVAL)


def verify_window() -> timedelta:
    return timedelta(hours=settings.DOMAINS_VERIFY_WINDOW)


@dataclass
class Recorded:
    """The domains whose check was recorded (removed ones are not there), and the
    certificate work their results call for."""

    domains: list[Domain] = field(default_factory=list)
    next_steps: NextSteps = field(default_factory=NextSteps)

    @property
    def domain(self) -> Domain | None:
        """The one domain of a single check; None if it was removed."""
        return self.domains[0] if self.domains else None


def domain_check(*, domain_id: int) -> Recorded:
    """Run one DNS check now and record its result."""
    found = Domain.objects.filter(pk=domain_id).values_list("hostname", "is_apex").first()
    if found is None:
        return Recorded()
    hostname, is_apex = found
    result = diagnosis.verify(hostname, is_apex=is_apex)
    return _record_results({domain_id: result})


def domain_check_many(*, domain_ids: Iterable[int]) -> Recorded:
    """`domain_check` for a batch (the sweep's): every DNS question of every domain is asked
    at once, then each result is recorded exactly as a single check records it.

    Domains removed before or during the batch are skipped.
    """
    targets = list(
        Domain.objects.filter(pk__in=list(domain_ids)).values_list("pk", "hostname", "is_apex")
    )
    results = diagnosis.verify_many((hostname, is_apex) for _, hostname, is_apex in targets)
    return _record_results(
        {pk: result for (pk, _, _), result in zip(targets, results, strict=True)}
    )


def _record_results(results: dict[int, CheckResult]) -> Recorded:
    """Record check results (the DNS was asked before, outside any transaction).

    One transaction for the lot, each domain re-read under its row lock (in primary-key
    order, so two batches never deadlock), so decisions are made on the row as it is
    now: a check run twice or concurrently records twice, never inconsistently, and a
    domain removed meanwhile is simply not there. Events go in with one INSERT. If the
    batch fails, each domain is recorded on its own, so one bad row cannot block the rest.
    """
    try:
        return _record_together(results)
    except Exception:
        if len(results) == 1:
            raise
        log.exception("recording %d checks together failed; recording one by one", len(results))
    recorded = Recorded()
    for domain_id, result in results.items():
        try:
            one = _record_together({domain_id: result})
        except Exception:
            log.exception("recording the check of domain %s failed", domain_id)
            continue
        recorded.domains += one.domains
        recorded.next_steps += one.next_steps
    return recorded


def _record_together(results: dict[int, CheckResult]) -> Recorded:
    recorded = Recorded()
    with transaction.atomic(), events_in_bulk():
        locked = (
            Domain.objects.select_for_update(of=("self",))
            .select_related("project")
            .filter(pk__in=list(results))
            .order_by("pk")
        )
        for domain in locked:
            result = results[domain.pk]
            if result.ok:
                _record_success(domain, result, recorded.next_steps)
            else:
                _record_failure(domain, result)
            recorded.domains.append(domain)
    return recorded


def _result_fields(result: CheckResult, now: datetime, message: str | None = None) -> dict:
    return {
        "check_code": result.code,
        "check_message": message or result.message,
        "check_expected": result.expected,
        "check_found": result.found,
        "checked_at": now,
    }


def _record_success(domain: Domain, result: CheckResult, next_steps: NextSteps) -> None:
    """Record a passing check; the certificate work it calls for goes to `next_steps`."""
    now = timezone.now()
    was_failing = domain.check_code not in ("", CheckCode.OK)
    fields = _result_fields(result, now) | {
        "check_attempts": 0,
        "next_check_at": now + recheck_interval(),
    }
    if domain.state in AWAITING_OWNER_STATES:
        # Verified, and its certificate requested at once: one statement, not two.
        request = certificates.certificate_request_fields(now)
        if transition(domain, State.VERIFIED, State.ISSUING, verified_at=now, **fields, **request):
            record_event(project=domain.project, domain=domain, action=Action.VERIFIED)
            next_steps.issue.append(domain.pk)
            return
        domain.refresh_from_db(fields=["state"])
    update(domain, **fields)
    if was_failing and domain.is_live:
        record_event(project=domain.project, domain=domain, action=Action.VERIFIES_AGAIN)
    if domain.state == State.VERIFIED and domain.cert_state != CertState.ISSUED:
        # A Re-verify after a CAA block (or a lost request) asks for the certificate again.
        if certificates.certificate_request(domain=domain):
            next_steps.issue.append(domain.pk)
    elif domain.state == State.ISSUING and certificates.certificate_claim_if_late(domain=domain):
        # Re-verify while the certificate is late: issue it again (issuing is idempotent).
        next_steps.issue_now.append(domain.pk)


def _record_failure(domain: Domain, result: CheckResult) -> None:
    now = timezone.now()
    live = domain.is_live
    previous_code = domain.check_code
    if live and previous_code in ("", CheckCode.OK):
        # A live domain just stopped verifying: its own window starts now.
        domain.window_started_at, domain.check_attempts = now, 0
        record_event(
            project=domain.project,
            domain=domain,
            action=Action.STOPPED_VERIFYING,
            message=result.message,
        )
    message = f"This domain stopped verifying: {result.message}" if live else result.message
    attempts = domain.check_attempts + 1
    window_end = domain.window_started_at + verify_window()
    fields: dict[str, Any] = _result_fields(result, now, message) | {
        "check_attempts": attempts,
        "window_started_at": domain.window_started_at,
    }
    if now >= window_end and not result.temporary and domain.state != State.FAILED:
        hours = settings.DOMAINS_VERIFY_WINDOW
        opening = (
            f"This domain stopped verifying {hours} hours ago and still does not:"
            if live
            else f"Verification did not succeed within {hours} hours:"
        )
        fields["check_message"] = f"{opening} {result.message} Fix the record, then choose Verify."
        if transition(domain, State.FAILED, next_check_at=None, **fields):
            record_event(
                project=domain.project,
                domain=domain,
                action=Action.FAILED,
                message=fields["check_message"],
            )
            return
    if domain.state == State.FAILED:
        fields["next_check_at"] = None  # a failed domain waits for Verify
    else:
        # The last check of the window lands on its end, so the failure shows on time.
        next_at = now + backoff_delay(attempts)
        fields["next_check_at"] = min(next_at, window_end) if now < window_end else next_at
    update(domain, **fields)
    if previous_code != result.code and not (live and previous_code in ("", CheckCode.OK)):
        record_event(
            project=domain.project,
            domain=domain,
            action=Action.CHECK_FAILED,
            message=f"{result.code}: {result.message}",
        )
