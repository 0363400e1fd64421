"""Custom domains: Add domain, Verify / Re-verify, Remove, and the troubleshooting steps.

Each function is keyword-only; a refusal raises django.core.exceptions.ValidationError
with a message a person can act on and a `code` a program can branch on. Nothing here
queues work: a caller that wants a check run by a worker queues it (domains/tasks.py).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from domains.choices import Action, CheckCode, State
from domains.dns import diagnosis, hostnames
from domains.models import Domain, Project
from domains.services.events import record_event
from domains.services.lifecycle import transition, update

FIRST_CHECK_AFTER = timedelta(minutes=1)


@transaction.atomic
def domain_add(*, project: Project, hostname: str, actor: User | None) -> Domain:
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
    record_event(project=project, domain=domain, action=Action.ADDED, actor=actor)
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
def domain_request_check(*, domain: Domain, actor: User | None) -> Domain:
    """Verify / Re-verify: open a new verification window; the check is due at once.

    The caller runs the check itself (`verifydomain`) or queues it for a worker
    (`domains.tasks.check_domain`); if the queueing is lost, the sweep finds it due.
    """
    now = timezone.now()
    reset = {
        "check_attempts": 0,
        "window_started_at": now,
        "next_check_at": now,
        "check_requested_at": now,
    }
    if not transition(domain, State.PENDING, **reset):
        update(domain, **reset)
    action = Action.REVERIFY_REQUESTED if domain.verified_at else Action.VERIFY_REQUESTED
    record_event(project=domain.project, domain=domain, action=action, actor=actor)
    return domain


def domain_troubleshoot(*, domain: Domain) -> dict:
    """The spec's troubleshooting steps, run now: does it still verify? does CAA block?"""
    verified = diagnosis.verify(domain.hostname, is_apex=domain.is_apex)
    caa = diagnosis.caa(domain.hostname)
    return {
        "verifies": verified.ok,
        "verify_message": verified.message,
        "caa_blocks": caa.code == CheckCode.CAA_BLOCKED,
        "caa_message": caa.message,
    }


@transaction.atomic
def domain_remove(*, domain: Domain, actor: User | None) -> None:
    """Stop serving at once: the row goes; its redirects and certificates with it."""
    project, hostname = domain.project, domain.hostname
    Project.objects.filter(pk=project.pk, primary_domain=domain).update(primary_domain=None)
    domain.delete()
    record_event(project=project, hostname=hostname, action=Action.REMOVED, actor=actor)
