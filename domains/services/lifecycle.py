"""The one state machine of a custom domain, and the one way to write a domain's row.

Every state change of a Domain goes through `transition()`, a conditional
UPDATE (`filter(pk=..., state__in=allowed_sources).update(...)`): when no row
changed, someone else got there first and the caller stops. That is what makes
the tasks safe to run twice or concurrently. Every other write of a domain's
fields goes through `update()`, so the row and the caller's instance never
disagree.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

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


def can_transition(source: str, target: str) -> bool:
    return source in TRANSITIONS.get(target, frozenset())


def update(domain: Domain, **fields: Any) -> None:
    """Write these fields of the domain's row and of the instance alike."""
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
    changed = Domain.objects.filter(pk=domain.pk, state__in=sources).update(**changes)
    if changed:
        _copy(domain, changes)
    return bool(changed)


def _copy(domain: Domain, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        setattr(domain, name, value)
