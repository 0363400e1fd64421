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
from django.utils import timezone
from django.utils.translation import gettext_noop

from domains.choices import MISSING_RECORD_CODES, Action, CheckCode, State
from domains.dns.results import CheckResult
from domains.models import Domain
from domains.policy import backoff_delay, temporary_failure_limit, verify_window
from domains.services import redirects
from domains.services.events import record_event
from domains.services.lifecycle import transition, update
from petstore.sentences import Sentence

# What a failed check says when a domain that was served finds its record missing (no record,
# or the name gone from DNS): it was there a moment ago, so the new domain's "not yet ... can
# take up to 48 hours to propagate" would send the owner waiting for something that will not
# come. By (is_apex, nxdomain).
GONE = {
    (True, True): gettext_noop(
        "%(hostname)s no longer has its ALIAS or ANAME record pointing to %(target)s: the name "
        "no longer exists in DNS (NXDOMAIN). It was there when the domain went live, so it was "
        "removed or changed at your DNS provider: add it again. Visitors see it again within "
        "minutes, once resolvers forget the missing answer."
    ),
    (True, False): gettext_noop(
        "%(hostname)s no longer has its ALIAS or ANAME record pointing to %(target)s. It was "
        "there when the domain went live, so it was removed or changed at your DNS provider: "
        "add it again. Visitors see it again within minutes, once resolvers forget the missing "
        "answer."
    ),
    (False, True): gettext_noop(
        "%(hostname)s no longer has its CNAME record pointing to %(target)s: the name no longer "
        "exists in DNS (NXDOMAIN). It was there when the domain went live, so it was removed or "
        "changed at your DNS provider: add it again. Visitors see it again within minutes, once "
        "resolvers forget the missing answer."
    ),
    (False, False): gettext_noop(
        "%(hostname)s no longer has its CNAME record pointing to %(target)s. It was there when "
        "the domain went live, so it was removed or changed at your DNS provider: add it again. "
        "Visitors see it again within minutes, once resolvers forget the missing answer."
    ),
}
MINUTE = "%Y-%m-%d %H:%M"


def result_fields(result: CheckResult, now: datetime, said: Sentence | None = None) -> dict:
    """The fields every recorded check writes, passing or failing."""
    said = said or result.said
    diagnosis, findings = result.diagnosis, []
    if diagnosis is not None:
        # Each finding's sentence is kept beside the diagnosis, which stays as the API and
        # `domainstatus` give it (domains/dns/findingsaid.py).
        findings = [finding.get("said") for finding in diagnosis["findings"]]
        diagnosis = diagnosis | {
            "findings": [
                {name: value for name, value in finding.items() if name != "said"}
                for finding in diagnosis["findings"]
            ]
        }
    return {
        "check_code": result.code,
        "check_message": said.english(),
        "check_said": {"message": said.stored(), "findings": findings},
        "check_expected": result.expected,
        "check_found": result.found,
        "checked_at": now,
        "check_diagnosis": diagnosis,
    }


def record_failure(domain: Domain, result: CheckResult) -> None:
    """Record a failing check, under the domain's row lock (domains/services/verification.py)."""
    if result.code in MISSING_RECORD_CODES and (
        domain.is_live or domain.state == State.MISCONFIGURED
    ):
        result = replace(result, said=record_gone(domain, result))
    if domain.is_live:
        _record_live_failure(domain, result)
    else:
        _record_claim_failure(domain, result)


def record_gone(domain: Domain, result: CheckResult) -> Sentence:
    """What a domain that was served is told when its record is missing: gone, not "yet"."""
    return Sentence(
        GONE[(domain.is_apex, result.code == CheckCode.NXDOMAIN)],
        {"hostname": domain.hostname_unicode, "target": settings.PLATFORM_CNAME_TARGET},
    )


def _checked(fields: dict[str, Any], said: Sentence) -> None:
    """The check's message is `said` (its findings stay those of `result_fields`)."""
    fields["check_message"] = said.english()
    fields["check_said"] = fields["check_said"] | {"message": said.stored()}


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
    reason = result.said
    if result.temporary and counts:
        assert temporarily_since is not None
        reason = Sentence(
            gettext_noop(
                "The DNS has failed to answer for %(hostname)s since %(since)s UTC, for more "
                "than %(hours)d hours. Ask your DNS provider whether the zone is still served "
                "(a lame delegation answers SERVFAIL or nothing)."
            ),
            {
                "hostname": domain.hostname_unicode,
                "since": f"{temporarily_since:{MINUTE}}",
                "hours": settings.DOMAINS_TEMPORARY_FAILURE_LIMIT,
            },
        )
        _checked(fields, reason)
    stops_at = domain.stops_serving_at(failing_since=failing_since)
    next_at = now + backoff_delay(domain.check_attempts + 1)
    if stops_at is None:
        # Only temporary failures so far: no grace period runs yet; the check that ends
        # the limit lands on it, so the grace period starts on time.
        fields["next_check_at"] = min(next_at, limit_at) if limit_at else next_at
        update(domain, **fields)
        return
    if now >= stops_at and counts:
        assert failing_since is not None
        stopped = Sentence(
            gettext_noop(
                "Not served since %(now)s UTC: its DNS stopped answering on %(since)s UTC and "
                "was not fixed within %(hours)d hours. %(reason)s Then choose Re-verify."
            )
            if result.temporary
            else gettext_noop(
                "Not served since %(now)s UTC: the DNS record stopped pointing here on "
                "%(since)s UTC and was not fixed within %(hours)d hours. %(reason)s Then "
                "choose Re-verify."
            ),
            {
                "now": f"{now:{MINUTE}}",
                "since": f"{failing_since:{MINUTE}}",
                "hours": settings.DOMAINS_GRACE_HOURS,
                "reason": reason,
            },
        )
        _checked(fields, stopped)
        if transition(domain, State.MISCONFIGURED, next_check_at=None, **fields):
            record_event(domain=domain, action=Action.STOPPED_SERVING, said=stopped)
            redirects.redirects_follow_target(target=domain)
        return
    fields["next_check_at"] = min(next_at, stops_at)
    first = domain.failing_since is None
    update(domain, **fields)
    if first:
        record_event(
            domain=domain,
            action=Action.STOPPED_VERIFYING,
            said=Sentence(
                gettext_noop(
                    "%(reason)s The domain is still served until %(until)s UTC; fix the record "
                    "before then."
                ),
                {"reason": reason, "until": f"{stops_at:{MINUTE}}"},
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
        failed = Sentence(
            gettext_noop(
                "Verification did not succeed within %(hours)d hours: %(reason)s Fix the "
                "record, then choose Verify."
            ),
            {"hours": hours, "reason": result.said},
        )
        _checked(fields, failed)
        if transition(domain, State.FAILED, next_check_at=None, **fields):
            record_event(domain=domain, action=Action.FAILED, said=failed)
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
            said=result.said,
        )
