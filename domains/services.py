"""The writes of the custom-domains feature. Views, admin, commands, tasks and tests call these.

Each function is keyword-only; a refusal raises django.core.exceptions.ValidationError
with a message a person can act on and a `code` a program can branch on.
"""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from domains import checks, hostnames
from domains.events import record_event
from domains.models import Deploy, Domain, Plan, Project, Redirect
from domains.states import State, transition

# Recording a check's result (the backoff, the window, the state moves) lives in
# domains/verification.py; its entry points are services too.
from domains.verification import (  # noqa: F401 - re-exported
    backoff_delay,
    domain_check,
    domain_check_many,
)

FIRST_CHECK_AFTER = timedelta(minutes=1)
REDIRECT_STATUSES = (301, 302, 307, 308)


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
