"""The audit trail: one helper that every write of the domains feature calls."""

from __future__ import annotations

from contextlib import AbstractContextManager

from django.contrib.auth.models import User
from django.utils import timezone

from domains.choices import Action
from domains.models import Domain, DomainEvent, Project
from domains.services.bulk import BulkInsert

_events = BulkInsert(DomainEvent.objects, "domain_events")


def record_event(
    *,
    project: Project | None = None,
    domain: Domain | None = None,
    hostname: str = "",
    action: str,
    message: str = "",
    actor: User | None = None,
    rival_project: Project | None = None,
) -> DomainEvent:
    """One Activity line: of `domain` (its project's), or of `project` about a host name
    that has no row any more (Remove, expiry)."""
    if project is None:
        if domain is None:
            raise ValueError("an event names a domain or a project")
        project = domain.project
    event = DomainEvent(
        project=project,
        domain=domain,
        hostname=hostname or (domain.hostname if domain else ""),
        actor=actor,
        action=action,
        message=message,
        rival_project_id=rival_project.pk if rival_project else None,
    )
    _events.save(event)
    return event


def events_in_bulk() -> AbstractContextManager[list[DomainEvent]]:
    """Collect the events recorded inside and insert them with one bulk INSERT at the end
    (in the order they were recorded). On an exception nothing is inserted."""
    return _events.in_bulk()


def record_rival_claim(*, holder: Domain, rival: Project, message: str) -> DomainEvent | None:
    """Tell the holder of a name that `rival` claimed it: at most one line per name and
    rival project per day (UTC), so a rival's add/remove loop cannot bury the owner's other
    lines. The caller holds the rival project's row lock (Add domain takes it), so two adds
    of one rival cannot both find no line."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    told = DomainEvent.objects.filter(
        project_id=holder.project_id,
        hostname=holder.hostname,
        action=Action.RIVAL_CLAIM,
        rival_project_id=rival.pk,
        created_at__gte=today,
    )
    if told.exists():
        return None
    return record_event(
        domain=holder, action=Action.RIVAL_CLAIM, message=message, rival_project=rival
    )
