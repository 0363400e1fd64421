"""Recording what a DNS check found: the state moves, the backoff and the 48-hour window.

`domain_check` (one domain, now: Verify, `verifydomain`, the `check_domain` task) and
`domain_check_many` (the sweep's batches) ask the DNS first, outside any transaction,
then record every result through the same functions below, so a domain ends in the
same place whichever way it was checked. Both return what they recorded and the
certificate work it calls for (`Recorded.next_steps`), which the caller queues.

In a batch every domain is decided and recorded on its own: a domain whose check raises,
at any stage, is logged with its id, counted in the task failures, and left out; the
others are recorded, whoever owns them (a batch is recorded in one savepoint, and again
with a savepoint per domain only when that fails).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from domains import metrics, selectors
from domains.choices import (
    AWAITING_OWNER_STATES,
    CERT_LATE_AT_CHECK,
    LIVE_STATES,
    Action,
    CheckCode,
    State,
)
from domains.dns import diagnosis
from domains.dns.diagnosis import CheckResult
from domains.models import Domain, DomainEvent, ProvenHostname, Redirect
from domains.services import certificates, claims, redirects
from domains.services.events import events_in_bulk, record_event
from domains.services.lifecycle import transition, update
from domains.services.nextsteps import NextSteps
from petstore.models import TaskFailure
from petstore.taskfailures import describe, task_failure_record

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


def temporary_failure_limit() -> timedelta:
    return timedelta(hours=settings.DOMAINS_TEMPORARY_FAILURE_LIMIT)


def _domain_failed(domain_id: int, stage: str, exc: BaseException) -> None:
    """One domain's check raised: logged with its id and counted; the batch goes on, and
    the sweep finds the domain due again when its lease ends."""
    log.error("checking domain %s failed while %s", domain_id, stage, exc_info=exc)
    task_failure_record(
        task_name=f"{__name__}.domain_check_many",
        kind=TaskFailure.Kind.FAILED,
        error=f"domain {domain_id}, {stage}: {describe(exc)}",
    )


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


def domain_check(*, domain_id: int, deadline: float | None = None) -> Recorded:
    """Run one DNS check now, within `deadline` seconds of DNS, and record its result."""
    return domain_check_many(domain_ids=[domain_id], deadline=deadline)


def domain_check_many(*, domain_ids: Iterable[int], deadline: float | None = None) -> Recorded:
    """Check domains now (one, or the sweep's batch): every DNS question of every domain is
    asked at once, then each result is recorded under the domain's row lock.

    A claim on a contested name that is not live yet also asks for its ownership TXT
    record. Domains removed before or during the check are skipped.
    """
    targets = list(
        Domain.objects.filter(pk__in=list(domain_ids)).values_list(
            "pk", "hostname", "is_apex", "project_id", "state"
        )
    )
    contested = selectors.contested_claims(
        (host, project) for _, host, _, project, state in targets if state not in LIVE_STATES
    )
    ask_txt = {host for host, _ in contested}
    results = diagnosis.verify_many(
        ((host, is_apex) for _, host, is_apex, _, _ in targets), ask_txt=ask_txt, deadline=deadline
    )
    checked: dict[int, Checked] = {}
    for (pk, host, _, project, _), result in zip(targets, results, strict=True):
        if isinstance(result, Exception):
            _domain_failed(pk, "deciding", result)
        else:
            checked[pk] = Checked(result, contested=(host, project) in contested)
    return _record_results(checked)


@dataclass(frozen=True)
class Checked:
    """What the DNS said about one claim, and whether its name needs a TXT proof."""

    result: CheckResult
    contested: bool


def _record_results(results: dict[int, Checked]) -> Recorded:
    """Record check results (the DNS was asked before, outside any transaction).

    One transaction for the lot, each domain re-read under its row lock (in primary-key
    order, so two batches never deadlock), so decisions are made on the row as it is
    now: a check run twice or concurrently records twice, never inconsistently, and a
    domain removed meanwhile is simply not there. Events go in with one INSERT. The batch
    is recorded in one savepoint; if a domain raises, the batch is rolled back to it and
    recorded again with each domain in its own savepoint, so the one that raises is left
    out alone. If the batch as a whole fails (its lock, its INSERTs), each domain is
    recorded in a transaction of its own.
    """
    if not results:
        return Recorded()
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
        except Exception as exc:  # noqa: BLE001 - this domain's failure, not the batch's
            _domain_failed(domain_id, "recording", exc)
            continue
        recorded.domains += one.domains
        recorded.next_steps += one.next_steps
    return recorded


@dataclass
class _Batch:
    """What recording a batch reads once for all its domains."""

    # The domains of the batch that some redirect points at (most have none).
    redirect_targets: set[int]
    # Each domain in its own savepoint (the batch's second attempt), so one domain's
    # database error is that domain's alone; in the first attempt it fails the attempt.
    one_by_one: bool = False


def _record_together(results: dict[int, Checked]) -> Recorded:
    with (
        transaction.atomic(),
        events_in_bulk() as events,
        claims.proofs_in_bulk() as proofs,
    ):
        locked = (
            Domain.objects.select_for_update(of=("self",), no_key=True)
            .select_related("project")
            .filter(pk__in=list(results))
            .order_by("pk")
        )
        domains = list(locked)
        batch = _Batch(redirect_targets=_redirect_targets([domain.pk for domain in domains]))
        if len(domains) > 1:
            try:
                with transaction.atomic():
                    return _record_all(domains, results, batch)
            except Exception:  # noqa: BLE001 - found again below, with the domain it belongs to
                log.info("a check of the batch failed to record; recording one by one")
                # What the attempt collected goes with it; the rows are read again, since
                # the instances hold what the rolled-back statements wrote.
                del events[:], proofs[:]
                domains = list(locked.all())
        batch.one_by_one = True
        return _record_one_by_one(domains, results, batch, events, proofs)


def _record_all(domains: list[Domain], results: dict[int, Checked], batch: _Batch) -> Recorded:
    recorded = Recorded()
    for domain in domains:
        _record_one(domain, results[domain.pk], recorded.next_steps, batch)
        recorded.domains.append(domain)
    return recorded


def _record_one_by_one(
    domains: list[Domain],
    results: dict[int, Checked],
    batch: _Batch,
    events: list[DomainEvent],
    proofs: list[ProvenHostname],
) -> Recorded:
    recorded = Recorded()
    failed: list[tuple[int, Exception]] = []
    for domain in domains:
        # What this domain adds to the bulk INSERTs goes if its savepoint is rolled back.
        marks, steps = (len(events), len(proofs)), NextSteps()
        try:
            with transaction.atomic():
                _record_one(domain, results[domain.pk], steps, batch)
        except Exception as exc:  # noqa: BLE001 - this domain's failure, not the batch's
            del events[marks[0] :], proofs[marks[1] :]
            failed.append((domain.pk, exc))
            continue
        recorded.domains.append(domain)
        recorded.next_steps += steps
    for domain_id, error in failed:
        _domain_failed(domain_id, "recording", error)
    return recorded


def _redirect_targets(domain_ids: list[int]) -> set[int]:
    """Which of these domains some redirect points at (one query for a batch)."""
    return set(
        Redirect.objects.filter(to_domain_id__in=domain_ids).values_list("to_domain_id", flat=True)
    )


def _record_one(domain: Domain, checked: Checked, next_steps: NextSteps, batch: _Batch) -> None:
    """Decide what the check means for the row as it is now, and record it."""
    result = checked.result
    if result.ok and not domain.is_live:
        result = _claim(domain, checked)
    metrics.check_recorded(result.code)
    if result.ok:
        _record_success(domain, result, next_steps, batch)
    else:
        _record_failure(domain, result)


def _claim(domain: Domain, checked: Checked) -> CheckResult:
    """The DNS points at the platform: may this claim go live? Its result, or why not.

    A contested name needs the claim's TXT proof; a proven claim takes the name from a
    live claim of another project unless that one's token is in the TXT record too.
    """
    result = checked.result
    if not checked.contested:
        # Nobody else claims the name (a claim added since is caught by the constraint).
        return result
    if domain.verification_token not in result.txt:
        return _ownership_required(domain, result)
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
            message=(
                f"The TXT record {domain.ownership_txt_name} also proves another project's "
                "claim on this name, which is live there. Remove that project's value from "
                "the record, keep this one's, then choose Verify."
            ),
        )
    _take_from(holder, domain)
    return result


def _ownership_required(domain: Domain, result: CheckResult) -> CheckResult:
    return replace(
        result,
        code=CheckCode.OWNERSHIP_REQUIRED,
        message=(
            f"{domain.hostname_unicode} points to the platform, but another project claims "
            "this name or has claimed it before. Prove it is yours: add the TXT record "
            f"{domain.ownership_txt_name} with the value {domain.verification_token}, "
            "then choose Verify."
        ),
        expected=f"TXT {domain.ownership_txt_name} {domain.verification_token}",
        found="; ".join(f"TXT {text}" for text in result.txt),
    )


def _take_from(holder: Domain, winner: Domain) -> None:
    """The winner proved control with its TXT record: the holder stops serving at once."""
    message = (
        f"Another project proved control of {holder.hostname_unicode} with a TXT record, so "
        "the name is served there now and no longer here. If the name is yours, add this "
        "project's TXT record and choose Re-verify."
    )
    if transition(holder, State.LOST, check_message=message, next_check_at=None):
        record_event(domain=holder, action=Action.LOST, message=message)
        redirects.redirects_follow_target(target=holder)
        record_event(
            domain=winner,
            action=Action.TOOK_OVER,
            message=f"{winner.hostname_unicode} was live for another project until now.",
        )


def _result_fields(result: CheckResult, now: datetime, message: str | None = None) -> dict:
    return {
        "check_code": result.code,
        "check_message": message or result.message,
        "check_expected": result.expected,
        "check_found": result.found,
        "checked_at": now,
    }


def _record_success(
    domain: Domain, result: CheckResult, next_steps: NextSteps, batch: _Batch
) -> None:
    """Record a passing check; the certificate work it calls for goes to `next_steps`."""
    now = timezone.now()
    was_failing = domain.check_code not in ("", CheckCode.OK)
    fields = _result_fields(result, now) | {
        "check_attempts": 0,
        "next_check_at": now + recheck_interval(),
        "failing_since": None,
        "failing_temporarily_since": None,
    }
    if domain.state in AWAITING_OWNER_STATES:
        # Verified, and its certificate requested at once: one statement, not two.
        request = certificates.certificate_request_fields(now)
        try:
            # Another project's claim on the name may have gone live meanwhile (the unique
            # constraint): rare, so only the batch's second attempt, one by one, pays for
            # a savepoint here; in the first the error sends the batch to the second.
            with transaction.atomic() if batch.one_by_one else nullcontext():
                moved = transition(
                    domain, State.VERIFIED, State.ISSUING, verified_at=now, **fields, **request
                )
        except IntegrityError:
            if not batch.one_by_one:
                raise
            # Check again soon.
            _record_failure(domain, _ownership_required(domain, result))
            return
        if moved:
            claims.record_proof(domain, by_txt=domain.verification_token in result.txt)
            record_event(domain=domain, action=Action.VERIFIED)
            if domain.pk in batch.redirect_targets:
                redirects.redirects_follow_target(target=domain)
            next_steps.issue.append(domain.pk)
            return
        domain.refresh_from_db(fields=["state"])
    update(domain, **fields)
    if was_failing and domain.is_live:
        record_event(domain=domain, action=Action.VERIFIES_AGAIN)
    if domain.state == State.VERIFIED:
        # A Re-verify after a CAA block (or a lost request) asks for the certificate again
        # (a verified domain's certificate is blocked or not requested: CERT_STATES).
        if certificates.certificate_request(domain=domain):
            next_steps.issue.append(domain.pk)
    elif domain.state == State.ISSUING and certificates.certificate_claim_if_late(
        domain=domain, late_after=CERT_LATE_AT_CHECK, now=now
    ):
        # Re-verify while the certificate is late: issue it again (issuing is idempotent).
        next_steps.issue_now.append(domain.pk)


def _record_failure(domain: Domain, result: CheckResult) -> None:
    if domain.is_live:
        _record_live_failure(domain, result)
    else:
        _record_claim_failure(domain, result)


def _record_live_failure(domain: Domain, result: CheckResult) -> None:
    """A served domain failed its check. The owner's misconfiguration starts the grace
    period at the first failed check (Verify does not restart it), and at its end the
    domain stops serving. A temporary DNS failure only schedules another check, until
    temporary failures have lasted DOMAINS_TEMPORARY_FAILURE_LIMIT hours in a row (a lame
    delegation answers SERVFAIL forever): from then on they count as failures too."""
    now = timezone.now()
    temporarily_since = (domain.failing_temporarily_since or now) if result.temporary else None
    limit_at = temporarily_since + temporary_failure_limit() if temporarily_since else None
    counts = limit_at is None or now >= limit_at
    failing_since = domain.failing_since
    if failing_since is None and counts:
        failing_since = now
    fields: dict[str, Any] = _result_fields(result, now) | {
        "check_attempts": domain.check_attempts + 1,
        "failing_since": failing_since,
        "failing_temporarily_since": temporarily_since,
    }
    reason = result.message
    if result.temporary and counts:
        reason = (
            f"The DNS has failed to answer for {domain.hostname_unicode} since "
            f"{temporarily_since:%Y-%m-%d %H:%M} UTC, for more than "
            f"{settings.DOMAINS_TEMPORARY_FAILURE_LIMIT} hours. Ask your DNS provider whether "
            "the zone is still served (a lame delegation answers SERVFAIL or nothing)."
        )
        fields["check_message"] = reason
    stops_at = domain.stops_serving_at(failing_since=failing_since)
    next_at = now + backoff_delay(domain.check_attempts + 1)
    if stops_at is None:
        # Only temporary failures so far: no grace period runs yet; the check that ends
        # the limit lands on it, so the grace period starts on time.
        fields["next_check_at"] = min(next_at, limit_at) if limit_at else next_at
        update(domain, **fields)
        return
    if now >= stops_at and counts:
        what = (
            "its DNS stopped answering"
            if result.temporary
            else "the DNS record stopped pointing here"
        )
        fields["check_message"] = (
            f"Not served since {now:%Y-%m-%d %H:%M} UTC: {what} "
            f"on {failing_since:%Y-%m-%d %H:%M} UTC and was not fixed within "
            f"{settings.DOMAINS_GRACE_HOURS} hours. {reason} Then choose Re-verify."
        )
        if transition(domain, State.MISCONFIGURED, next_check_at=None, **fields):
            record_event(
                domain=domain,
                action=Action.STOPPED_SERVING,
                message=fields["check_message"],
            )
            redirects.redirects_follow_target(target=domain)
        return
    fields["next_check_at"] = min(next_at, stops_at)
    first = domain.failing_since is None
    update(domain, **fields)
    if first:
        record_event(
            domain=domain,
            action=Action.STOPPED_VERIFYING,
            message=(
                f"{reason} The domain is still served until "
                f"{stops_at:%Y-%m-%d %H:%M} UTC; fix the record before then."
            ),
        )


def _record_claim_failure(domain: Domain, result: CheckResult) -> None:
    """A claim that is not served failed its check: back off, and fail a pending claim at
    the end of its verification window."""
    now = timezone.now()
    previous_code = domain.check_code
    attempts = domain.check_attempts + 1
    window_end = domain.window_started_at + verify_window()
    fields: dict[str, Any] = _result_fields(result, now) | {"check_attempts": attempts}
    if domain.state == State.PENDING and now >= window_end and not result.temporary:
        hours = settings.DOMAINS_VERIFY_WINDOW
        fields["check_message"] = (
            f"Verification did not succeed within {hours} hours: {result.message} "
            "Fix the record, then choose Verify."
        )
        if transition(domain, State.FAILED, next_check_at=None, **fields):
            record_event(
                domain=domain,
                action=Action.FAILED,
                message=fields["check_message"],
            )
            return
    if domain.state != State.PENDING:
        fields["next_check_at"] = None  # not served, out of its window: waits for Verify
    else:
        # The last check of the window lands on its end, so the failure shows on time.
        next_at = now + backoff_delay(attempts)
        fields["next_check_at"] = min(next_at, window_end) if now < window_end else next_at
    update(domain, **fields)
    if previous_code != result.code:
        record_event(
            domain=domain,
            action=Action.CHECK_FAILED,
            message=result.message,
        )
