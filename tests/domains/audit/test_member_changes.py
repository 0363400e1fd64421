"""Every change to a project's people is in its audit log, once, with who made it: a key
through the API, a member in the dashboard, staff by a command; the last-owner refusal and
other refused changes leave nothing."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from domains.choices import AuditAction, Role
from domains.models import AuditEntry, Invitation, Membership
from domains.services.invitations import invitation_accept, member_invite
from petstore.apikeys.services import api_key_issue
from tests.domains.api.helpers import SHOP, post
from tests.fixtures.people import make_user
from tests.pets.helpers import bearer

pytestmark = pytest.mark.django_db
MEMBERS = f"{SHOP}/members"


def entries(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action))


def test_the_api_records_each_member_change_with_the_key(team, mailoutbox):
    issued = api_key_issue(user=team[Role.OWNER])
    client = APIClient()
    client.credentials(**bearer(issued.plaintext))
    prefix = issued.api_key.prefix
    invited = post(client, MEMBERS, {"email": "gina@example.test", "role": "viewer"})
    assert invited.status_code == 201, invited.content
    erin = Membership.objects.get(user=team[Role.DEVELOPER]).pk
    changed = client.generic(
        "PATCH", f"{MEMBERS}/mem_{erin}", json.dumps({"role": "admin"}),
        content_type="application/json",
    )  # fmt: skip
    assert changed.status_code == 200
    frank = Membership.objects.get(user=team[Role.VIEWER]).pk
    assert client.delete(f"{MEMBERS}/mem_{frank}").status_code == 204

    [invite] = entries(AuditAction.MEMBER_INVITED)
    [role] = entries(AuditAction.MEMBER_ROLE_CHANGED)
    [removal] = entries(AuditAction.MEMBER_REMOVED)
    for entry in (invite, role, removal):
        assert (entry.actor_type, entry.actor_username, entry.actor_key_prefix) == (
            "key", "alice", prefix,
        )  # fmt: skip
    assert invite.target == "invitation:gina@example.test"
    assert role.target == "member:erin" and role.changes == {"role": ["developer", "admin"]}
    assert removal.target == "member:frank" and removal.changes == {"role": ["viewer", None]}


def test_the_last_owner_refusal_records_nothing(team, member_api):
    client = member_api(team[Role.OWNER])
    alice = Membership.objects.get(user=team[Role.OWNER]).pk
    before = AuditEntry.objects.count()
    assert client.delete(f"{MEMBERS}/mem_{alice}").status_code == 409
    assert AuditEntry.objects.count() == before


def test_joining_and_a_transfer_in_the_dashboard_name_the_member(team, shop, client, mailoutbox):
    invited = member_invite(project=shop, email="hal@example.test", role=Role.VIEWER, actor=None)
    hal = make_user("hal")
    secret = invited.link.rstrip("/").rsplit("/", 1)[1]
    invitation_accept(token=secret, user=hal)
    [joined] = entries(AuditAction.MEMBER_JOINED)
    assert joined.target == "member:hal" and joined.changes["role"] == [None, "viewer"]
    assert (joined.actor_type, joined.actor_username) == ("user", "hal")  # the link's holder

    client.force_login(team[Role.OWNER])
    dave = Membership.objects.get(user=team[Role.ADMIN]).pk
    response = client.post(reverse("dashboard:ownership_transfer", args=["shop"]), {"member": dave})
    assert response.status_code == 302
    [transfer] = entries(AuditAction.MEMBER_OWNERSHIP_TRANSFERRED)
    assert (transfer.actor_type, transfer.actor_username) == ("user", "alice")
    assert transfer.target == "member:dave"
    assert Invitation.objects.get(email="hal@example.test").accepted_by == hal


def test_joining_with_an_account_made_from_the_link_is_the_new_members_change(
    shop, client, mailoutbox
):
    """The account is made in the request that accepts, before its session exists: the
    entry is still the person's, not the platform's."""
    invited = member_invite(project=shop, email="hal@example.test", role=Role.VIEWER, actor=None)
    password = "hal's long password 1"
    answer = client.post(
        urlsplit(invited.link).path,
        {"username": "hal", "password1": password, "password2": password},
        HTTP_X_REQUEST_ID="req-join-1",
    )
    assert answer.status_code == 302
    [joined] = entries(AuditAction.MEMBER_JOINED)
    hal = User.objects.get(username="hal")
    assert (joined.actor_type, joined.actor_user_id, joined.actor_username) == (
        "user", hal.pk, "hal",
    )  # fmt: skip
    assert (joined.ip, joined.request_id) == ("127.0.0.1", "req-join-1")


def test_staffs_addmember_is_recorded_as_staff(shop, alice):
    make_user("ivan")
    call_command("addmember", "shop", "ivan", "--role", "developer", "--actor", "ops-jo")
    [added] = entries(AuditAction.MEMBER_ADDED)
    assert (added.actor_type, added.actor_username) == ("staff", "ops-jo")
    assert added.changes == {"role": [None, "developer"]}
