"""Recording what a DNS check found: the state moves, in batches.

What a failing check does (the backoff, the 48-hour window, the grace period) is in
domains/services/failures.py; whether a claim on a contested name may go live, and take
the name from another project, in domains/services/claims.py.

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
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from domains import metrics, selectors
from domains.choices import AWAITING_OWNER_STATES, LIVE_STATES, Action, CheckCode, State
from domains.dns import diagnosis, doctor, hostnames
from domains.dns.results import CheckResult
from domains.models import Domain, DomainEvent, ProvenHostname, Redirect
from domains.models.domains import acme_challenge_target
from domains.policy import CERT_LATE_AT_CHECK, sweep_lease
from domains.services import certificates, claims, failures, redirects
from domains.services.events import events_in_bulk, record_event
from domains.services.lifecycle import transition, update, writes_in_bulk
from domains.services.nextsteps import NextSteps
from petstore.models import TaskFailure
from petstore.taskfailures import describe, task_failure_record

log = logging.getLogger(__name__)


def recheck_interval() -> timedelta:
    return timedelta(hours=settings.DOMAINS_RECHECK_INTERVAL)


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
    ids = list(domain_ids)
    _lease(ids)
    targets = list(
        Domain.objects.filter(pk__in=ids).values_list(
            "pk", "hostname", "is_apex", "project_id", "state", "verification_token"
        )
    )
    contested = selectors.contested_claims(
        (host, project) for _, host, _, project, state, _ in targets if state not in LIVE_STATES
    )
    ask_txt = {host for host, _ in contested}
    # The zone's own name servers: with the check of a domain not live yet, after a live
    # domain's failing one (domains/dns/doctor.py). Per claim, as `delegated` is: two
    # projects' claims of one name each with their own TXT proof and challenge target.
    diagnose = [
        doctor.Ask(
            always=state not in LIVE_STATES,
            token=token if (host, project) in contested else None,
        )
        for _, host, _, project, state, token in targets
    ]
    results = diagnosis.verify_many(
        ((host, is_apex) for _, host, is_apex, *_ in targets),
        ask_txt=ask_txt,
        deadline=deadline,
        diagnose=diagnose,
        delegated=[
            acme_challenge_target(token) if hostnames.is_wildcard(host) else None
            for _, host, _, _, _, token in targets
        ],
    )
    checked: dict[int, Checked] = {}
    for (pk, host, _, project, *_), result in zip(targets, results, strict=True):
        if isinstance(result, Exception):
            _domain_failed(pk, "deciding", result)
        else:
            checked[pk] = Checked(result, contested=(host, project) in contested)
    return _record_results(checked)


def _lease(domain_ids: list[int]) -> None:
    """Claim the checks about to run for a lease from now (domains.policy.sweep_lease): the
    sweep's claim, or a Verify's (due at once), is taken again when the check starts, so
    the sweep never claims a check still running, whatever its wait in the queue. A domain
    whose check is recorded gets its next check then; one whose check is lost is due again
    when the lease ends. A later next check (a live domain's Re-verify) is left as it is.
    A database that refuses the statement (a row it will not update) costs the checks only
    their new lease: the sweep's claim still holds, and they are checked and recorded."""
    lease_end = timezone.now() + sweep_lease()
    try:
        with transaction.atomic():
            Domain.objects.filter(
                pk__in=domain_ids, next_check_at__isnull=False, next_check_at__lt=lease_end
            ).update(next_check_at=lease_end)
    except DatabaseError:
        log.warning("taking the lease of %d checks failed; checking them", len(domain_ids))


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
    out alone. In the batch's savepoint the rows are written with one UPDATE at the end
    (lifecycle.writes_in_bulk); one by one, each with its own. If the batch as a whole
    fails (its lock, its INSERTs), each domain is recorded in a transaction of its own.
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
                with transaction.atomic(), writes_in_bulk(domains):
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
        result = claims.claim_result(domain, result, contested=checked.contested)
    metrics.check_recorded(result.code)
    if result.ok:
        _record_success(domain, result, next_steps, batch)
    else:
        failures.record_failure(domain, result)


def _record_success(
    domain: Domain, result: CheckResult, next_steps: NextSteps, batch: _Batch
) -> None:
    """Record a passing check; the certificate work it calls for goes to `next_steps`."""
    now = timezone.now()
    was_failing = domain.check_code not in ("", CheckCode.OK)
    fields = failures.result_fields(result, now) | {
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
            failures.record_failure(domain, claims.ownership_required(domain, result))
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
