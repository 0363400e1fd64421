"""audit_record: one entry in the change's transaction, its actor from the context, never
a secret."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domains.choices import AuditAction, EventType
from domains.models import AuditEntry
from domains.services.audit import audit_record, changed_fields
from petstore.actors import SYSTEM, Actor, ActorType, acting_as, current_actor, staff_actor


def test_outside_a_request_or_a_command_the_actor_is_the_platform():
    assert current_actor() == SYSTEM


def test_it_records_the_current_actor_and_the_changes(shop, alice):
    actor = Actor(ActorType.USER, user_id=alice.pk, username="alice", ip="192.0.2.1")
    with acting_as(actor):
        entry = audit_record(
            shop,
            AuditAction.MEMBER_INVITED,
            "dave@example.com",
            changes={
                "role": (None, "viewer"),
                "expires_at": (None, datetime(2026, 1, 1, tzinfo=UTC)),
            },
        )
    entry.refresh_from_db()
    assert (entry.project_id, entry.action, entry.target) == (
        shop.pk,
        "member.invited",
        "dave@example.com",
    )
    assert (entry.actor_type, entry.actor_user_id, entry.actor_username) == (
        "user",
        alice.pk,
        "alice",
    )
    assert entry.ip == "192.0.2.1"
    assert entry.changes == {
        "role": [None, "viewer"],
        "expires_at": [None, "2026-01-01T00:00:00+00:00"],
    }
    assert current_actor() == SYSTEM


def test_an_explicit_actor_wins_and_a_project_id_will_do(shop):
    entry = audit_record(shop.pk, AuditAction.KEY_CREATED, "pk_abc", actor=staff_actor("carol"))
    assert (entry.project_id, entry.actor_type, entry.actor_username) == (shop.pk, "staff", "carol")


@pytest.mark.parametrize("field", ["secret", "token_hash", "password", "key_hash"])
def test_a_secret_is_refused(shop, field):
    with pytest.raises(ValueError, match="secret"):
        audit_record(shop, AuditAction.WEBHOOK_SECRET_ROTATED, "x", changes={field: ("a", "b")})
    assert not AuditEntry.objects.filter(action=AuditAction.WEBHOOK_SECRET_ROTATED).exists()


def test_an_action_outside_the_list_is_refused(shop):
    with pytest.raises(ValueError):
        audit_record(shop, "domain.frobnicated", "x")


def test_the_event_types_names_are_reused():
    shared = set(AuditAction.values) & set(EventType.values)
    assert shared == {"domain.stopped", "claim.expired", "claim.lost", "redirect.paused"}


def test_changed_fields_keeps_only_what_changed():
    assert changed_fields({"a": 1, "b": 2}, {"a": 1, "b": 3}) == {"b": (2, 3)}
