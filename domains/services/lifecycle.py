"""The one state machine of a custom domain, and the one way to write a domain's row.

Every state change of a Domain goes through `transition()`, a conditional
UPDATE (`filter(pk=..., state__in=allowed_sources).update(...)`): when no row
changed, someone else got there first and the caller stops. That is what makes
the tasks safe to run twice or concurrently. Every other write of a domain's
fields goes through `update()`, so the row and the caller's instance never
disagree.

Inside `writes_in_bulk(domains)` (a sweep's batch, its rows read under their row locks)
the writes of those instances are collected instead and go in with one UPDATE at the
end: a transition is decided on the instance, which is the row as locked plus the
batch's own writes, and the UPDATE still checks each row's state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import Field
from django.db.models.expressions import BaseExpression

from domains.choices import State
from domains.models import Domain

# target state -> the states it may be reached from. The whole table, in one place.
TRANSITIONS: dict[str, frozenset[str]] = {
    # A check passed for the first time, or again after a failure, a stop or a loss.
    State.VERIFIED: frozenset(
        {State.PENDING, State.FAILED, State.ISSUING, State.MISCONFIGURED, State.LOST}
    ),
    # A certificate was requested for a verified domain.
    State.ISSUING: frozenset({State.VERIFIED}),
    # The certificate was issued.
    State.ACTIVE: frozenset({State.ISSUING}),
    # The verification window of a domain that never went live ran out.
    State.FAILED: frozenset({State.PENDING}),
    # A live domain kept failing its checks for the whole grace period.
    State.MISCONFIGURED: frozenset({State.VERIFIED, State.ISSUING, State.ACTIVE}),
    # Another project proved control of the name with its TXT record.
    State.LOST: frozenset({State.VERIFIED, State.ISSUING, State.ACTIVE}),
    # Verify / Re-verify on a domain that is not served starts a new window.
    State.PENDING: frozenset({State.FAILED, State.MISCONFIGURED, State.LOST}),
}


class TransitionNotAllowed(ValueError):
    pass


class BulkWriteRefused(DatabaseError):
    """The batch's one UPDATE did not find a row as the batch read it, or a batch's row
    was written through another instance: the caller records the batch one by one."""


@dataclass
class _Pending:
    """One domain of a batch: the state its row was locked in, and the fields written."""

    domain: Domain
    locked_state: str
    fields: set[str] = field(default_factory=set)


# While writes_in_bulk() is active: the batch's domains by primary key.
_batch: ContextVar[dict[int, _Pending] | None] = ContextVar("domain_writes", default=None)


@contextmanager
def writes_in_bulk(domains: Iterable[Domain]) -> Iterator[None]:
    """Collect the writes of these domains (read under their row locks in the caller's
    transaction) and make them with one UPDATE when the block ends; on an exception
    nothing is written. Raises BulkWriteRefused when a row is not as it was read."""
    batch = {domain.pk: _Pending(domain, domain.state) for domain in domains}
    token = _batch.set(batch)
    try:
        yield
    finally:
        _batch.reset(token)
    _write_all([pending for pending in batch.values() if pending.fields])


def _collecting(domain: Domain, fields: dict[str, Any]) -> _Pending | None:
    """The batch entry this write goes to, or None when it is made now (no batch, another
    domain, or a value the database computes)."""
    batch = _batch.get()
    pending = batch.get(domain.pk) if batch is not None else None
    if pending is None:
        return None
    if pending.domain is not domain:
        raise BulkWriteRefused(f"domain {domain.pk} written through another instance")
    if any(isinstance(value, BaseExpression) for value in fields.values()):
        raise BulkWriteRefused(f"domain {domain.pk} written with an expression")
    return pending


def can_transition(source: str, target: str) -> bool:
    return source in TRANSITIONS.get(target, frozenset())


def update(domain: Domain, **fields: Any) -> None:
    """Write these fields of the domain's row and of the instance alike."""
    pending = _collecting(domain, fields)
    if pending is not None:
        pending.fields |= fields.keys()
    else:
        Domain.objects.filter(pk=domain.pk).update(**fields)
    _copy(domain, fields)


def transition(domain: Domain, target: str, *then: str, **fields: Any) -> bool:
    """Move `domain` to `target` if its current row state allows it.

    `then` continues the move through further states in the same statement (a check that
    verifies a domain and requests its certificate: `transition(d, VERIFIED, ISSUING)`):
    every step must be in the table, the row's state must allow the first, and the row
    ends in the last. Returns False when the row's state was changed by someone else
    meanwhile; the instance is updated only on success.
    """
    path = (target, *then)
    sources = TRANSITIONS.get(target)
    if sources is None:
        raise TransitionNotAllowed(f"no transition into {target!r}")
    for source, step in pairwise(path):
        if not can_transition(source, step):
            raise TransitionNotAllowed(f"no transition from {source!r} into {step!r}")
    changes = {"state": path[-1], **fields}
    pending = _collecting(domain, changes)
    if pending is not None:
        # The row is locked: the instance's state is the row's.
        if domain.state not in sources:
            return False
        pending.fields |= changes.keys()
        _copy(domain, changes)
        return True
    changed = Domain.objects.filter(pk=domain.pk, state__in=sources).update(**changes)
    if changed:
        _copy(domain, changes)
    return bool(changed)


def _copy(domain: Domain, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        setattr(domain, name, value)


def _write_all(batch: list[_Pending]) -> None:
    """One UPDATE ... FROM (VALUES ...) for the batch: every field any of its domains
    wrote, each row's values from its instance (the row as locked, plus the batch's
    writes), on the condition that the row is still in the state it was locked in."""
    if not batch:
        return
    fields = [_field(name) for name in sorted(set().union(*(p.fields for p in batch)))]
    pk, state = _field(Domain._meta.pk.name if Domain._meta.pk else "id"), _field("state")
    typed = [pk, state, *fields]
    row = "(" + ", ".join(f"%s::{column.db_type(connection)}" for column in typed) + ")"
    params: list[Any] = []
    for pending in batch:
        params += [pending.domain.pk, pending.locked_state]
        params += [
            column.get_db_prep_save(getattr(pending.domain, column.attname), connection)
            for column in fields
        ]
    table = _quote(Domain._meta.db_table)
    sets = ", ".join(f"{_quote(column.column)} = v.{_quote(column.column)}" for column in fields)
    columns = ", ".join(_quote(column.column) for column in fields)
    sql = (
        f"UPDATE {table} AS d SET {sets} "  # noqa: S608 (the model's names, quoted; values are parameters)
        f"FROM (VALUES {', '.join([row] * len(batch))}) "
        f"AS v(pk, locked_state, {columns}) "
        f"WHERE d.{_quote(pk.column)} = v.pk AND d.{_quote(state.column)} = v.locked_state"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount != len(batch):
            raise BulkWriteRefused(f"{len(batch) - cursor.rowcount} of the batch's rows changed")


def _field(name: str) -> Field:
    """A column of the domain's table, by its field's name."""
    found = Domain._meta.get_field(name)
    assert isinstance(found, Field), name
    return found


def _quote(name: str | None) -> str:
    assert name, "a column without a name"
    return connection.ops.quote_name(name)
