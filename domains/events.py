"""The audit trail: one helper that every write of the domains feature calls."""

from __future__ import annotations

from domains.models import DomainEvent


def record_event(*, project, domain=None, hostname="", action, message="", actor=None):
    return DomainEvent.objects.create(
        project=project,
        domain=domain,
        hostname=hostname or (domain.hostname if domain else ""),
        actor=actor,
        action=action,
        message=message,
    )
