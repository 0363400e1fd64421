"""A check that fails: the backoff, the 48-hour window of a claim, and the grace period
of a live domain.

Recording a check (domains/services/verification.py) comes here when the DNS does not
point at the platform, or when a claim may not go live (domains/services/claims.py).
A claim that is not served backs off (domains.policy.CHECK_BACKOFF) and fails at the end of its
verification window; a served domain keeps serving for DOMAINS_GRACE_HOURS after its
first failed check, then stops.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone

from domains.choices import MISSING_RECORD_CODES, Action, CheckCode, State
from domains.dns.diagnosis import CheckResult
from domains.models import Domain
from domains.policy import backoff_delay, temporary_failure_limit, verify_window
from domains.services import redirects
from domains.services.events import record_event
from domains.services.lifecycle import transition, update


def result_fields(result: CheckResult, now: datetime, message: str | None = None) -> dict:
    """The fields every recorded check writes, passing or failing."""
    return {
        "check_code": result.code,
        "check_message": message or result.message,
        "check_expected": result.expected,
        "check_found": result.found,
        "checked_at": now,
        "check_diagnosis": result.diagnosis,
    }


def record_failure(domain: Domain, result: CheckResult) -> None:
    """Record a failing check, under the domain's row lock (domains/services/verification.py)."""
    if result.code in MISSING_RECORD_CODES and (
        domain.is_live or domain.state == State.MISCONFIGURED
    ):
        result = replace(result, message=record_gone(domain, result))
    if domain.is_live:
        _record_live_failure(domain, result)
    else:
        _record_claim_failure(domain, result)


def record_gone(domain: Domain, result: CheckResult) -> str:
    """What a domain that was served is told when its record is missing: gone, not "yet"."""
    context = {
        "hostname": domain.hostname_unicode,
        "target": settings.PLATFORM_CNAME_TARGET,
        "apex": domain.is_apex,
        "nxdomain": result.code == CheckCode.NXDOMAIN,
    }
    return render_to_string("domains/copy/record_gone.txt", context).strip()


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
    fields: dict[str, Any] = result_fields(result, now) | {
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
    fields: dict[str, Any] = result_fields(result, now) | {"check_attempts": attempts}
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
