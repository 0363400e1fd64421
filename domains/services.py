"""The writes of the custom-domains feature. Views, admin, commands, tasks and tests call these.

Each function is keyword-only; a refusal raises django.core.exceptions.ValidationError
with a message a person can act on and a `code` a program can branch on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from domains import certificates, checks, hostnames
from domains.events import events_in_bulk, record_event
from domains.models import Deploy, Domain, Plan, Project, Redirect
from domains.states import LIVE_STATES, CertState, State, transition

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
FIRST_CHECK_AFTER = timedelta(minutes=1)
REDIRECT_STATUSES = (301, 302, 307, 308)


def backoff_delay(failed_checks: int) -> timedelta:
    return BACKOFF[min(max(failed_checks, 1), len(BACKOFF)) - 1]


def recheck_interval() -> timedelta:
    return timedelta(hours=settings.DOMAINS_RECHECK_INTERVAL)


def verify_window() -> timedelta:
    return timedelta(hours=settings.DOMAINS_VERIFY_WINDOW)


# --- Projects and deploys ---------------------------------------------------


def project_create(*, slug: str, owner, plan: str = Plan.FREE, name: str = "") -> Project:
    if plan not in Plan.values:
        raise ValidationError(
            f"Unknown plan {plan!r}; choose one of {', '.join(Plan.values)}.", code="invalid_plan"
        )
    if Project.objects.filter(slug=slug).exists():
        raise ValidationError(f"A project with the slug {slug!r} exists already.", code="taken")
    project = Project(slug=slug, owner=owner, plan=plan, name=name or slug)
    project.full_clean()
    project.save()
    return project


def deploy_record(*, project: Project, html: str, succeeded: bool = True) -> Deploy:
    return Deploy.objects.create(project=project, html=html, succeeded=succeeded)


# --- Domains ----------------------------------------------------------------


@transaction.atomic
def domain_add(*, project: Project, hostname: str, actor) -> Domain:
    if not project.is_paid:
        raise ValidationError(
            "Custom domains need the Pro plan or above; this project is on the "
            f"{project.get_plan_display()} plan.",
            code="plan_required",
        )
    if project.latest_deploy is None:
        raise ValidationError(
            "Deploy the project successfully before adding a custom domain.",
            code="deploy_required",
        )
    ascii_name = hostnames.normalize_hostname(hostname)
    taken = Domain.objects.filter(hostname=ascii_name).first()
    if taken is not None:
        raise _taken_error(ascii_name, same_project=taken.project_id == project.pk)
    now = timezone.now()
    try:
        with transaction.atomic():
            domain = Domain.objects.create(
                project=project,
                hostname=ascii_name,
                is_apex=hostnames.is_apex(ascii_name),
                window_started_at=now,
                next_check_at=now + FIRST_CHECK_AFTER,
            )
    except IntegrityError:
        # Someone attached the same name a moment ago.
        raise _taken_error(ascii_name, same_project=False) from None
    record_event(project=project, domain=domain, action="added", actor=actor)
    return domain


def _taken_error(ascii_name: str, *, same_project: bool) -> ValidationError:
    shown = hostnames.to_unicode(ascii_name)
    if same_project:
        return ValidationError(f"{shown} is already added to this project.", code="duplicate")
    return ValidationError(
        f"{shown} is already attached to another project. If it is yours, remove it there first.",
        code="hostname_taken",
    )


@transaction.atomic
def domain_request_check(*, domain: Domain, actor, queue: bool = True) -> Domain:
    """Verify / Re-verify: open a new verification window and check at once.

    `queue=False` is for callers that run the check themselves (`verifydomain`).
    """
    from domains import tasks  # tasks import this module

    now = timezone.now()
    reset = {"check_attempts": 0, "window_started_at": now, "next_check_at": now}
    if not transition(domain, State.PENDING, **reset):
        Domain.objects.filter(pk=domain.pk).update(**reset)
        for name, value in reset.items():
            setattr(domain, name, value)
    action = "reverify_requested" if domain.verified_at else "verify_requested"
    record_event(project=domain.project, domain=domain, action=action, actor=actor)
    if queue:
        domain_id = domain.pk
        transaction.on_commit(lambda: tasks.check_domain.delay(domain_id))
    return domain


def domain_check(*, domain_id: int) -> Domain | None:
    """Run one DNS check now and record its result; None if the domain was removed."""
    found = Domain.objects.filter(pk=domain_id).values_list("hostname", "is_apex").first()
    if found is None:
        return None
    hostname, is_apex = found
    result = checks.verify(hostname, is_apex=is_apex)
    return _record_results({domain_id: result}).get(domain_id)


def domain_check_many(*, domain_ids: Iterable[int]) -> list[Domain]:
    """`domain_check` for a batch (the sweep's): every DNS question of every domain is asked
    at once, then each result is recorded exactly as a single check records it.

    Domains removed before or during the batch are skipped; returns the recorded ones.
    """
    targets = list(
        Domain.objects.filter(pk__in=list(domain_ids)).values_list("pk", "hostname", "is_apex")
    )
    results = checks.verify_many((hostname, is_apex) for _, hostname, is_apex in targets)
    recorded = _record_results(
        {pk: result for (pk, _, _), result in zip(targets, results, strict=True)}
    )
    return list(recorded.values())


def _record_results(results: dict[int, checks.CheckResult]) -> dict[int, Domain]:
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
    recorded: dict[int, Domain] = {}
    for domain_id, result in results.items():
        try:
            recorded |= _record_together({domain_id: result})
        except Exception:
            log.exception("recording the check of domain %s failed", domain_id)
    return recorded


def _record_together(results: dict[int, checks.CheckResult]) -> dict[int, Domain]:
    recorded: dict[int, Domain] = {}
    issue: list[int] = []
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
                _record_success(domain, result, issue)
            else:
                _record_failure(domain, result)
            recorded[domain.pk] = domain
        certificates.queue_issue(issue)
    return recorded


def _result_fields(result: checks.CheckResult, now, message: str | None = None) -> dict:
    return {
        "check_code": result.code,
        "check_message": message or result.message,
        "check_expected": result.expected,
        "check_found": result.found,
        "checked_at": now,
    }


def _record_success(domain: Domain, result: checks.CheckResult, issue: list[int]) -> None:
    """Record a passing check; ids of domains whose certificate was requested go to `issue`."""
    now = timezone.now()
    was_failing = domain.check_code not in ("", checks.OK)
    fields = _result_fields(result, now) | {
        "check_attempts": 0,
        "next_check_at": now + recheck_interval(),
    }
    if domain.state in (State.PENDING, State.FAILED):
        if transition(domain, State.VERIFIED, verified_at=now, **fields):
            record_event(project=domain.project, domain=domain, action="verified")
            if certificates.certificate_request(domain=domain, queue=False):
                issue.append(domain.pk)
            return
        domain.refresh_from_db(fields=["state"])
    _update(domain, **fields)
    if was_failing and domain.state in LIVE_STATES:
        record_event(project=domain.project, domain=domain, action="verifies_again")
    if domain.state == State.VERIFIED and domain.cert_state != CertState.ISSUED:
        # A Re-verify after a CAA block (or a lost request) asks for the certificate again.
        if certificates.certificate_request(domain=domain, queue=False):
            issue.append(domain.pk)
    elif domain.state == State.ISSUING:
        # Re-verify while the certificate is late: queue its task again (issuing is idempotent).
        certificates.certificate_requeue_if_late(domain=domain)


def _record_failure(domain: Domain, result: checks.CheckResult) -> None:
    now = timezone.now()
    live = domain.state in LIVE_STATES
    previous_code = domain.check_code
    if live and previous_code in ("", checks.OK):
        # A live domain just stopped verifying: its own window starts now.
        domain.window_started_at, domain.check_attempts = now, 0
        record_event(
            project=domain.project,
            domain=domain,
            action="stopped_verifying",
            message=result.message,
        )
    message = f"This domain stopped verifying: {result.message}" if live else result.message
    attempts = domain.check_attempts + 1
    window_end = domain.window_started_at + verify_window()
    fields = _result_fields(result, now, message) | {
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
                action="failed",
                message=fields["check_message"],
            )
            return
    if domain.state == State.FAILED:
        fields["next_check_at"] = None  # a failed domain waits for Verify
    else:
        # The last check of the window lands on its end, so the failure shows on time.
        next_at = now + backoff_delay(attempts)
        fields["next_check_at"] = min(next_at, window_end) if now < window_end else next_at
    _update(domain, **fields)
    if previous_code != result.code and not (live and previous_code in ("", checks.OK)):
        record_event(
            project=domain.project,
            domain=domain,
            action="check_failed",
            message=f"{result.code}: {result.message}",
        )


def _update(domain: Domain, **fields) -> None:
    Domain.objects.filter(pk=domain.pk).update(**fields)
    for name, value in fields.items():
        setattr(domain, name, value)


def domain_troubleshoot(*, domain: Domain) -> dict:
    """The spec's troubleshooting steps, run now: does it still verify? does CAA block?"""
    verified = checks.verify(domain.hostname, is_apex=domain.is_apex)
    caa = checks.caa(domain.hostname)
    return {
        "verifies": verified.ok,
        "verify_message": verified.message,
        "caa_blocks": caa.code == checks.CAA_BLOCKED,
        "caa_message": caa.message,
    }


@transaction.atomic
def domain_remove(*, domain: Domain, actor) -> None:
    """Stop serving at once: the row goes; its redirects and certificates with it."""
    project, hostname = domain.project, domain.hostname
    Project.objects.filter(pk=project.pk, primary_domain=domain).update(primary_domain=None)
    domain.delete()
    record_event(project=project, hostname=hostname, action="removed", actor=actor)


# --- Primary domain and redirects ------------------------------------------


@transaction.atomic
def project_set_primary(*, project: Project, domain: Domain | None, actor) -> None:
    if domain is not None:
        if domain.project_id != project.pk:
            raise ValidationError(
                f"{domain.hostname_unicode} does not belong to this project.", code="not_owned"
            )
        if Redirect.objects.filter(from_domain=domain).exists():
            raise ValidationError(
                f"{domain.hostname_unicode} redirects elsewhere; delete that redirect before "
                "making it the primary domain.",
                code="primary_redirects",
            )
    Project.objects.filter(pk=project.pk).update(primary_domain=domain)
    project.primary_domain = domain
    record_event(
        project=project,
        domain=domain,
        action="primary_set",
        message=f"Primary domain: {domain.hostname if domain else 'none'}",
        actor=actor,
    )


@transaction.atomic
def redirect_save(
    *,
    project: Project,
    from_domain: Domain,
    to_domain: Domain,
    status: int = 301,
    redirect: Redirect | None = None,
    actor,
) -> Redirect:
    _validate_redirect(project, from_domain, to_domain, int(status), redirect)
    if redirect is None:
        redirect = Redirect(project=project)
    redirect.from_domain, redirect.to_domain, redirect.status = from_domain, to_domain, int(status)
    redirect.save()
    record_event(
        project=project,
        domain=from_domain,
        action="redirect_saved",
        message=f"{from_domain.hostname} -> {to_domain.hostname} ({redirect.status})",
        actor=actor,
    )
    return redirect


def _validate_redirect(project, from_domain, to_domain, status, redirect) -> None:
    for end in (from_domain, to_domain):
        if end.project_id != project.pk:
            raise ValidationError(
                f"{end.hostname_unicode} does not belong to this project.", code="not_owned"
            )
    if status not in REDIRECT_STATUSES:
        raise ValidationError(
            f"Redirect status must be one of {', '.join(map(str, REDIRECT_STATUSES))}.",
            code="invalid_status",
        )
    if from_domain.pk == to_domain.pk:
        raise ValidationError("A domain cannot redirect to itself.", code="redirect_loop")
    if project.primary_domain_id == from_domain.pk:
        raise ValidationError(
            f"{from_domain.hostname_unicode} is the primary domain; it cannot redirect away.",
            code="primary_redirects",
        )
    others = Redirect.objects.filter(project=project)
    if redirect is not None:
        others = others.exclude(pk=redirect.pk)
    if others.filter(from_domain=from_domain).exists():
        raise ValidationError(
            f"{from_domain.hostname_unicode} already has a redirect.", code="duplicate_from"
        )
    hops = dict(others.values_list("from_domain_id", "to_domain_id"))
    current, visited = to_domain.pk, set()
    while current in hops and current not in visited:
        visited.add(current)
        current = hops[current]
        if current == from_domain.pk:
            raise ValidationError(
                f"This redirect would make a loop back to {from_domain.hostname_unicode}.",
                code="redirect_loop",
            )


@transaction.atomic
def redirect_delete(*, redirect: Redirect, actor) -> None:
    project, from_domain = redirect.project, redirect.from_domain
    message = f"{from_domain.hostname} -> {redirect.to_domain.hostname}"
    redirect.delete()
    record_event(
        project=project,
        domain=from_domain,
        action="redirect_deleted",
        message=message,
        actor=actor,
    )


def project_domains_structure(*, project: Project) -> dict:
    primary = project.primary_domain.hostname if project.primary_domain_id else None
    redirects = project.redirects.select_related("from_domain", "to_domain")
    return {"primary": primary, "redirects": [r.as_dict() for r in redirects]}
