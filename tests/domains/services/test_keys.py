"""domains/services/keys.py: the scopes a member may give a key (never beyond their role),
a key limited to one project, and the notice, once, a week before a key ends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from domains.choices import EventType, Role
from domains.models import Delivery, Membership, OwnerEvent, Project, ProjectKey
from domains.services.keys import (
    key_create,
    key_scopes_offered,
    keys_expiring_tell,
)
from domains.services.webhooks import endpoint_create
from petstore.apikeys.models import ApiKey
from petstore.apikeys.scopes import ALL_SCOPES
from petstore.apikeys.services import api_key_issue, api_key_revoke

READS = {"domains:read", "webhooks:read", "members:read", "audit:read"}
PETS = {"pets:read", "pets:write"}


def member_of(project: Project, user) -> Project:
    """The project with `user`'s role on it, as the dashboard and the command look it up."""
    return Project.objects.for_member(user).get(pk=project.pk)


def test_the_scopes_offered_follow_the_role_on_the_project(alice, bob, shop, bobs):
    Membership.objects.create(project=bobs, user=alice, role=Role.VIEWER)
    assert key_scopes_offered(user=alice, project=member_of(shop, alice)) == ALL_SCOPES
    assert key_scopes_offered(user=alice, project=member_of(bobs, alice)) == READS | PETS


def test_a_key_of_all_projects_is_offered_the_union_of_the_users_roles(alice, bob, bobs, sketch):
    assert key_scopes_offered(user=bob) == ALL_SCOPES  # owner of bobs
    Membership.objects.create(project=sketch, user=bob, role=Role.DEVELOPER)
    Membership.objects.filter(project=bobs, user=bob).update(role=Role.VIEWER)
    offered = key_scopes_offered(user=bob)
    assert offered == READS | PETS | {"domains:write", "webhooks:write"}  # developer's writes
    assert key_scopes_offered(user=alice) == ALL_SCOPES
    Membership.objects.filter(user=alice).delete()
    assert key_scopes_offered(user=alice) == PETS  # a member of nothing: the pets API only


def test_a_viewer_cannot_make_a_key_beyond_viewing(alice, bob, bobs):
    Membership.objects.create(project=bobs, user=alice, role=Role.VIEWER)
    Membership.objects.filter(user=alice).exclude(project=bobs).delete()
    for project in (member_of(bobs, alice), None):
        with pytest.raises(ValidationError) as refused:
            key_create(user=alice, project=project, scopes=["domains:read", "domains:write"])
        assert refused.value.error_list[0].code == "key_scope_not_allowed"
        assert "domains:write" in refused.value.messages[0]
    assert not ApiKey.objects.exists()


def test_a_key_limited_to_a_project_is_made_with_its_binding_in_one_transaction(alice, shop):
    issued = key_create(user=alice, name="ci", project=member_of(shop, alice), scopes=None)
    assert ProjectKey.objects.get(api_key=issued.api_key).project == shop
    assert sorted(issued.api_key.scopes) == sorted(ALL_SCOPES)
    with pytest.raises(ValidationError):
        key_create(user=alice, project=member_of(shop, alice), scopes=["nope:read"])
    with pytest.raises(ValidationError):
        key_create(user=alice, project=member_of(shop, alice), scopes=["pets:read"], days=367)
    assert ApiKey.objects.count() == ProjectKey.objects.count() == 1


# --- Told a week before the end ----------------------------------------------------------


def ending_in(user, days: float, **kwargs) -> ApiKey:
    key = key_create(user=user, name=f"in {days}", days=90, **kwargs).api_key
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() + timedelta(days=days))
    key.refresh_from_db()
    return key


def test_a_key_ending_within_a_week_is_told_once_on_each_project_it_reaches(alice, shop, sketch):
    key = ending_in(alice, 6.5)
    assert keys_expiring_tell() == 1
    events = OwnerEvent.objects.filter(type=EventType.KEY_EXPIRING).order_by("project__slug")
    assert [event.project.slug for event in events] == ["shop", "sketch"]
    data = events[0].data
    assert data["key"] == key.display_prefix == events[0].hostname
    assert (data["key_name"], data["username"]) == ("in 6.5", "alice")
    assert data["ends_at"] == key.expires_at.isoformat()
    assert data["path"] == "/dashboard/settings/api-keys/"
    assert "Settings → API keys" in data["what_to_do"]
    assert key.display_prefix in data["what"]
    # Mail carries it (one delivery per project's email), once.
    assert Delivery.objects.filter(event__in=events, channel="email").count() == 2
    assert keys_expiring_tell() == 0
    assert OwnerEvent.objects.filter(type=EventType.KEY_EXPIRING).count() == 2
    key.refresh_from_db()
    assert key.expiry_told_at is not None


def test_a_key_limited_to_a_project_is_told_there_only(alice, shop, sketch):
    ending_in(alice, 3, project=member_of(sketch, alice))
    keys_expiring_tell()
    told = OwnerEvent.objects.filter(type=EventType.KEY_EXPIRING)
    assert [event.project.slug for event in told] == ["sketch"]


def test_keys_ending_later_ended_or_revoked_are_not_told(alice, shop):
    later = ending_in(alice, 8)
    ended = ending_in(alice, -1)
    revoked = ending_in(alice, 2)
    api_key_revoke(api_key=revoked)
    assert keys_expiring_tell() == 0
    ApiKey.objects.filter(pk=later.pk).update(expires_at=timezone.now() + timedelta(days=6))
    assert keys_expiring_tell() == 1
    assert set(ApiKey.objects.filter(expiry_told_at__isnull=False)) == {later}
    assert ended.expires_at < timezone.now()


def test_a_key_issued_before_scopes_is_told_of_the_end_its_migration_set(alice, shop):
    # What apikeys.0007 left: every scope, an end 90 days after the migration; a week
    # before it, the same notice as any key's.
    old = api_key_issue(user=alice, name="from 1.1").api_key
    ApiKey.objects.filter(pk=old.pk).update(expires_at=timezone.now() + timedelta(days=7))
    assert keys_expiring_tell() == 1
    assert OwnerEvent.objects.get(type=EventType.KEY_EXPIRING).data["key"] == old.display_prefix


def test_webhooks_that_chose_the_event_carry_it(alice, shop, webhook_receiver):
    chosen = endpoint_create(project=shop, url=webhook_receiver.url, events=["key.expiring"])
    other = endpoint_create(
        project=shop, url=webhook_receiver.url + "?other", events=["domain.failing"]
    )
    ending_in(alice, 1)
    keys_expiring_tell()
    targets = set(Delivery.objects.filter(channel="webhook").values_list("target_id", flat=True))
    assert targets == {chosen.endpoint.pk}
    assert other.endpoint.pk not in targets
