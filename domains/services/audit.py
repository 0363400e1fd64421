"""The audit log's one writer: every change to a project writes one AuditEntry, in the
change's own transaction, through `audit_record`.

Who acts is not passed in: it is petstore.actors' `current_actor()`, the request's (a
member, a key, staff in the admin), a command's (`acting_as(staff_actor(...))`) or the
platform's (`system`, in a Celery task). A change that writes an Activity line gets its
entry from `record_event` (domains.choices.AUDIT_ACTION_OF_ACTION); every other write
calls `audit_record` itself.

Each entry is inserted at once, even inside a sweep's bulk of Activity lines: the changes
a sweep audits (a domain stopped, a claim expired or lost, a certificate) are few, and an
entry inserted in the change's savepoint goes with it when the savepoint is rolled back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from domains.choices import AuditAction
from domains.models import AuditEntry, Project
from petstore.actors import Actor, current_actor

# A field whose name holds one of these is never written into `changes`: its values are
# secrets (a webhook's signing secret, a key's hash, an invitation's token, a password).
SECRET_NAME_PARTS = ("secret", "token", "password", "hash", "key_material")

Changes = Mapping[str, tuple[Any, Any] | list[Any]]


def audit_record(
    project: Project | int,
    action: AuditAction | str,
    target: str = "",
    *,
    changes: Changes | None = None,
    actor: Actor | None = None,
) -> AuditEntry:
    """Record one change to `project` (a Project or its id), in the caller's transaction.

    - `action`: an AuditAction (`member.invited`, `key.created`, ...); anything else is
      refused with ValueError, so every action is one of the list.
    - `target`: what was changed, as a person reads it: a host name, a username or an
      email, a key's prefix, an endpoint's URL.
    - `changes`: `{field: (before, after)}` of the fields that changed (None for a side
      that does not exist: `{"role": (None, "viewer")}` for an invitation). Dates become
      ISO 8601; other values must be JSON's. Never a secret: a field whose name says it
      is one (SECRET_NAME_PARTS) is refused with ValueError.
    - `actor`: who acts, when it is not the current one (petstore.actors.current_actor()).

    Call it inside the change's `transaction.atomic()`, after the change's own writes, so
    the entry commits with the change or not at all.
    """
    if action not in AuditAction.values:
        raise ValueError(f"{action!r} is not an AuditAction")
    who = actor or current_actor()
    entry = AuditEntry(
        project_id=project if isinstance(project, int) else project.pk,
        actor_type=who.type,
        actor_user_id=who.user_id,
        actor_username=who.username,
        actor_key_prefix=who.key_prefix,
        action=action,
        target=target[: AuditEntry._meta.get_field("target").max_length or 300],
        changes=_plain_changes(changes or {}),
        ip=who.ip,
        request_id=who.request_id,
    )
    entry.save()
    return entry


def changed_fields(
    before: Mapping[str, Any], after: Mapping[str, Any], fields: Iterable[str] | None = None
) -> dict[str, tuple[Any, Any]]:
    """`changes` for audit_record: the fields (all of `after`'s by default) whose value
    differs between `before` and `after`."""
    names = list(fields) if fields is not None else list(after)
    return {
        name: (before.get(name), after.get(name))
        for name in names
        if before.get(name) != after.get(name)
    }


def _plain_changes(changes: Changes) -> dict[str, list[Any]]:
    plain = {}
    for name, pair in changes.items():
        if any(part in name.lower() for part in SECRET_NAME_PARTS):
            raise ValueError(f"{name!r} names a secret: the audit log never holds one")
        before, after = pair
        plain[name] = [_plain(before), _plain(after)]
    return plain


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    return value


def audit_purge(*, retention_days: int | None = None) -> int:
    """Delete the entries older than the retention (AUDIT_LOG_RETENTION_DAYS), the one
    deletion the database allows (domains_audit_purge, migration 0022); how many went."""
    days = settings.AUDIT_LOG_RETENTION_DAYS if retention_days is None else retention_days
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT domains_audit_purge(%s)", [days])
        row = cursor.fetchone()
    return int(row[0]) if row else 0
