"""A custom domain's own writes: Add domain, Verify / Re-verify, Remove.

Each function is keyword-only; a refusal raises django.core.exceptions.ValidationError
with a message a person can act on and a `code` a program can branch on. Nothing here
queues work: a caller that wants a check run by a worker queues it (domains/tasks.py).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from domains import selectors
from domains.choices import Action, State
from domains.dns import hostnames
from domains.models import Domain, DomainEvent, Project
from domains.policy import PLAN_DOMAIN_QUOTA
from domains.services.events import record_event, record_rival_claim
from domains.services.lifecycle import transition, update
from petstore.sentences import Sentence

FIRST_CHECK_AFTER = timedelta(minutes=1)


@transaction.atomic
def domain_add(
    *, project: Project, hostname: str, actor: User | None, limited: bool = True
) -> Domain:
    """Claim a host name for the project. A claim reserves nothing: other projects may
    claim the same name, and only a claim that proves control goes live.

    A project adds at most DOMAINS_ADD_PER_HOUR names an hour, and a name it removed
    only after DOMAINS_READD_COOLDOWN (so Remove + Add resets no cooldown and floods no
    feed); staff (`adddomain`, `limited=False`) are not limited."""
    if not project.is_paid:
        raise ValidationError(
            _("Custom domains need the Pro plan or above; this project is on the %(plan)s plan."),
            code="plan_required",
            params={"plan": project.get_plan_display()},
        )
    if project.latest_deploy is None:
        raise ValidationError(
            _("Deploy the project successfully before adding a custom domain."),
            code="deploy_required",
        )
    # A wildcard is for the plans that have custom domains at all (the refusal above).
    ascii_name = hostnames.normalize_hostname(hostname, wildcard=project.is_paid)
    hostnames.refuse_platform_registrable(ascii_name)
    shown = hostnames.to_unicode(ascii_name)
    # Locked, so two concurrent adds cannot both pass the quota.
    Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
    if limited:
        _refuse_if_adding_too_fast(project, ascii_name, shown)
    quota = PLAN_DOMAIN_QUOTA[project.plan]
    if project.domains.count() >= quota:
        raise ValidationError(
            _(
                "This project has %(quota)d custom domains, the most the %(plan)s plan "
                "allows. Remove one, or move to a larger plan."
            ),
            code="quota_reached",
            params={"quota": quota, "plan": project.get_plan_display()},
        )
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
        raise ValidationError(
            _("%(hostname)s is already added to this project."),
            code="duplicate",
            params={"hostname": shown},
        ) from None
    record_event(project=project, domain=domain, action=Action.ADDED, actor=actor)
    for holder in selectors.rival_claims(domain):
        record_rival_claim(
            holder=holder,
            rival=project,
            said=Sentence(
                gettext_noop(
                    "Another project added %(hostname)s. It cannot take the name without "
                    "proving control with a TXT record; add this project's TXT record (shown "
                    "with the DNS records) so that only you can prove it."
                ),
                {"hostname": shown},
            ),
        )
    return domain


@transaction.atomic
def domain_request_check(*, domain: Domain, actor: User | None, cooldown: bool = True) -> Domain:
    """Verify / Re-verify: open a new verification window; the check is due at once.

    The caller runs the check itself (`verifydomain`, `cooldown=False`) or queues it for a
    worker (`domains.tasks.request_check`); if the queueing is lost, the sweep finds it
    due. A queued check is never asked for twice, one domain is checked at most once per
    DOMAINS_VERIFY_COOLDOWN seconds, and a project asks at most DOMAINS_VERIFY_PER_HOUR
    times an hour (`cooldown=False`, staff's `verifydomain`: neither applies).
    """
    # The cooldown is read and set with the row locked: presses that arrive together wait
    # for each other here, and each reads what the one before it wrote (the caller's
    # instance was read before this transaction).
    domain.refresh_from_db(from_queryset=Domain.objects.select_for_update(no_key=True))
    now = timezone.now()
    if cooldown:
        _refuse_if_too_soon(domain, now)
        _refuse_if_verifying_too_often(domain.project, now)
    reset = {
        "check_attempts": 0,
        "window_started_at": now,
        "next_check_at": now,
        "check_requested_at": now,
    }
    if not transition(domain, State.PENDING, **reset):
        update(domain, **reset)
    action = Action.REVERIFY_REQUESTED if domain.verified_at else Action.VERIFY_REQUESTED
    record_event(domain=domain, action=action, actor=actor)
    return domain


def _refuse_if_too_soon(domain: Domain, now: datetime) -> None:
    if domain.check_in_progress:
        raise ValidationError(
            _("A check of this domain is already under way; its result shows here when it comes."),
            code="check_in_progress",
        )
    requested = domain.check_requested_at
    wait = settings.DOMAINS_VERIFY_COOLDOWN
    if requested is not None and now - requested < timedelta(seconds=wait):
        left = max(1, math.ceil(wait - (now - requested).total_seconds()))
        raise ValidationError(
            _("This domain was checked a moment ago; choose Verify again in %(left)d seconds."),
            code="cooldown",
            params={"left": left},
        )


HOUR = timedelta(hours=1)
VERIFY_ACTIONS = (Action.VERIFY_REQUESTED, Action.REVERIFY_REQUESTED)


def _minutes(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds() / 60))


def _refuse_if_adding_too_fast(project: Project, hostname: str, shown: str) -> None:
    """Called with the project's row locked, so two concurrent adds count each other.
    The Activity lines are the record: counted, never a counter of their own."""
    now = timezone.now()
    removed = (
        DomainEvent.objects.filter(
            project=project,
            action=Action.REMOVED,
            hostname=hostname,
            created_at__gt=now - timedelta(seconds=settings.DOMAINS_READD_COOLDOWN),
        )
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    if removed is not None:
        left = removed + timedelta(seconds=settings.DOMAINS_READD_COOLDOWN) - now
        raise ValidationError(
            _(
                "%(hostname)s was removed from this project a moment ago; it can be added "
                "again in %(minutes)d minutes."
            ),
            code="readd_cooldown",
            params={"hostname": shown, "minutes": _minutes(left)},
        )
    limit = settings.DOMAINS_ADD_PER_HOUR
    added = list(
        DomainEvent.objects.filter(project=project, action=Action.ADDED, created_at__gt=now - HOUR)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(added) >= limit:
        raise ValidationError(
            _(
                "This project added %(limit)d domains in the last hour, the most allowed; "
                "add more in %(minutes)d minutes."
            ),
            code="add_limit",
            params={"limit": limit, "minutes": _minutes(added[-1] + HOUR - now)},
        )


def _refuse_if_verifying_too_often(project: Project, now: datetime) -> None:
    """Counted from the Activity lines under the project's row lock, as for Add."""
    Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
    limit = settings.DOMAINS_VERIFY_PER_HOUR
    asked = list(
        DomainEvent.objects.filter(
            project=project, action__in=VERIFY_ACTIONS, created_at__gt=now - HOUR
        )
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(asked) >= limit:
        raise ValidationError(
            _(
                "This project chose Verify %(limit)d times in the last hour, the most "
                "allowed; choose Verify again in %(minutes)d minutes. Pending domains are "
                "still checked on their own meanwhile."
            ),
            code="verify_limit",
            params={"limit": limit, "minutes": _minutes(asked[-1] + HOUR - now)},
        )


@transaction.atomic
def domain_remove(*, domain: Domain, actor: User | None) -> None:
    """Stop serving at once: the row goes; its redirects and certificates with it. What
    proved the name stays (claims.ProvenHostname), so another project needs a TXT proof."""
    project, hostname = domain.project, domain.hostname
    effects = selectors.removal_effects(domain)
    for redirect in effects["redirects"]:
        record_event(
            project=project,
            domain=redirect.from_domain if redirect.from_domain_id != domain.pk else None,
            hostname=redirect.from_domain.hostname,
            action=Action.REDIRECT_DELETED,
            said=Sentence(
                gettext_noop("%(source)s -> %(target)s, removed with %(hostname)s"),
                {
                    "source": redirect.from_domain.hostname,
                    "target": redirect.to_domain.hostname,
                    "hostname": hostname,
                },
            ),
            actor=actor,
        )
    if effects["is_primary"]:
        Project.objects.filter(pk=project.pk).update(primary_domain=None)
        project.primary_domain = None
        record_event(
            project=project,
            hostname=hostname,
            action=Action.PRIMARY_CLEARED,
            said=Sentence(
                gettext_noop(
                    "%(hostname)s was the primary domain; the project's own address is again."
                ),
                {"hostname": hostname},
            ),
            actor=actor,
        )
    domain.delete()
    record_event(project=project, hostname=hostname, action=Action.REMOVED, actor=actor)
