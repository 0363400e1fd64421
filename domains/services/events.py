"""The audit trail: one helper that every write of the domains feature calls."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth.models import User

from domains.models import Domain, DomainEvent, Project

# While events_in_bulk() is active, record_event() collects instead of inserting.
_collected: ContextVar[list[DomainEvent] | None] = ContextVar("domain_events", default=None)


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
    collected = _collected.get()
    if collected is None:
        event.save()
    else:
        collected.append(event)
    return event


@contextmanager
def events_in_bulk() -> Iterator[list[DomainEvent]]:
    """Collect the events recorded inside and insert them with one bulk INSERT at the end
    (in the order they were recorded). On an exception nothing is inserted."""
    collected: list[DomainEvent] = []
    token = _collected.set(collected)
    try:
        yield collected
    finally:
        _collected.reset(token)
    if collected:
        DomainEvent.objects.bulk_create(collected)
