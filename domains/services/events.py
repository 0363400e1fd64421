"""The audit trail: one helper that every write of the domains feature calls."""

from __future__ import annotations

from contextlib import AbstractContextManager

from django.contrib.auth.models import User

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
    )
    _events.save(event)
    return event


def events_in_bulk() -> AbstractContextManager[list[DomainEvent]]:
    """Collect the events recorded inside and insert them with one bulk INSERT at the end
    (in the order they were recorded). On an exception nothing is inserted."""
    return _events.in_bulk()
