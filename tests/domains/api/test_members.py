"""`/v1/projects/{slug}/members`: the list of members and pending invitations, an
invitation by email (201), a role change (PATCH), removal and revocation (DELETE), each
refusal with the Error body and its code; a removed member's key finds nothing at once."""

from __future__ import annotations

import json

import pytest

from domains.choices import Role
from domains.models import Invitation, Membership, Project
from domains.policy import INVITATIONS_PER_HOUR
from domains.services import invitations, members
from tests.domains.api.helpers import SHOP, post
from tests.fixtures.people import make_user
from tests.pets.helpers import assert_error

pytestmark = pytest.mark.django_db
MEMBERS = f"{SHOP}/members"
# listMembers' statements, whatever the number of members: pinned (an N+1 shows here).
QUERIES = 3


def patch(client, path: str, body):
    return client.generic("PATCH", path, json.dumps(body), content_type="application/json")


def _id_of(client, username: str) -> str:
    [entry] = [m for m in client.get(MEMBERS).json() if m["username"] == username]
    return entry["id"]


def test_the_list_holds_members_then_pending_invitations(team, member_api, shop):
    invitations.member_invite(project=shop, email="g@example.test", role="viewer", actor=None)
    listed = member_api(team[Role.VIEWER]).get(MEMBERS)
    assert listed.status_code == 200
    body = listed.json()
    assert [(m["username"], m["email"], m["role"], m["state"]) for m in body] == [
        ("alice", None, "owner", "active"),
        ("dave", None, "admin", "active"),
        ("erin", None, "developer", "active"),
        ("frank", None, "viewer", "active"),
        (None, "g@example.test", "viewer", "pending"),
    ]
    assert [m["id"][:4] for m in body] == ["mem_"] * 4 + ["inv_"]


def test_an_admin_invites_by_email_and_gets_201_with_the_pending_invitation(
    team, member_api, smtp_server
):
    client = member_api(team[Role.ADMIN])
    answer = post(client, MEMBERS, {"email": "grace@example.test", "role": "developer"})
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["email"] == "grace@example.test"
    assert (body["role"], body["state"], body["username"]) == ("developer", "pending", None)
    assert answer["Location"].endswith(f"{MEMBERS}/{body['id']}")
    assert client.get(f"{MEMBERS}/{body['id']}").json() == body
    [mail] = smtp_server.messages
    assert mail["To"] == "grace@example.test"


@pytest.mark.parametrize(
    ("role", "body", "status", "code"),
    [
        (Role.ADMIN, {"email": "g@example.test", "role": "owner"}, 403, "role_not_allowed"),
        (Role.DEVELOPER, {"email": "g@example.test", "role": "viewer"}, 403, "forbidden"),
        (Role.OWNER, {"email": "not an address", "role": "viewer"}, 400, "invalid_email"),
        (Role.OWNER, {"email": "g@example.test", "role": "king"}, 400, "validation_error"),
    ],
)
def test_a_refused_invitation_says_why(team, member_api, role, body, status, code):
    assert_error(post(member_api(team[role]), MEMBERS, body), status, code)
    assert not Invitation.objects.exists()


def test_an_owner_changes_a_role_and_makes_another_owner(team, member_api):
    client = member_api(team[Role.OWNER])
    erin = _id_of(client, "erin")
    changed = patch(client, f"{MEMBERS}/{erin}", {"role": "owner"})
    assert changed.status_code == 200, changed.content
    assert (changed.json()["username"], changed.json()["role"]) == ("erin", "owner")
    assert Membership.objects.get(user=team[Role.DEVELOPER]).role == Role.OWNER


def test_the_last_owner_cannot_be_demoted_or_removed_409(team, member_api):
    client = member_api(team[Role.OWNER])
    alice = _id_of(client, "alice")
    body = assert_error(patch(client, f"{MEMBERS}/{alice}", {"role": "admin"}), 409, "last_owner")
    assert body["message"].startswith("A project always has an owner")
    assert_error(client.delete(f"{MEMBERS}/{alice}"), 409, "last_owner")
    assert Membership.objects.get(user=team[Role.OWNER]).role == Role.OWNER


def test_an_admin_cannot_touch_an_owner_403(team, member_api):
    client = member_api(team[Role.ADMIN])
    alice = _id_of(client, "alice")
    assert_error(patch(client, f"{MEMBERS}/{alice}", {"role": "viewer"}), 403, "role_not_allowed")
    assert_error(client.delete(f"{MEMBERS}/{alice}"), 403, "role_not_allowed")
    frank = _id_of(client, "frank")
    assert patch(client, f"{MEMBERS}/{frank}", {"role": "developer"}).status_code == 200


def test_a_viewer_reads_but_changes_nothing_403(team, member_api):
    client = member_api(team[Role.VIEWER])
    erin = _id_of(client, "erin")
    assert_error(patch(client, f"{MEMBERS}/{erin}", {"role": "viewer"}), 403, "forbidden")
    assert_error(client.delete(f"{MEMBERS}/{erin}"), 403, "forbidden")


def test_a_removed_members_key_finds_nothing_of_the_project_at_once(team, member_api):
    erin_api = member_api(team[Role.DEVELOPER])
    assert erin_api.get(f"{SHOP}/domains").status_code == 200
    owner = member_api(team[Role.OWNER])
    assert owner.delete(f"{MEMBERS}/{_id_of(owner, 'erin')}").status_code == 204
    assert_error(erin_api.get(f"{SHOP}/domains"), 404, "not_found")
    assert_error(erin_api.get(MEMBERS), 404, "not_found")
    assert [p["slug"] for p in erin_api.get("/v1/projects").json()] == []


def test_delete_of_an_invitation_id_revokes_it(team, member_api, shop):
    invited = invitations.member_invite(
        project=shop, email="g@example.test", role="admin", actor=None
    )
    client = member_api(team[Role.ADMIN])
    inv = f"inv_{invited.invitation.pk}"
    assert client.delete(f"{MEMBERS}/{inv}").status_code == 204
    assert Invitation.objects.get().revoked_at is not None
    assert_error(client.delete(f"{MEMBERS}/{inv}"), 404, "not_found")
    assert "g@example.test" not in json.dumps(client.get(MEMBERS).json())


@pytest.mark.parametrize("raw", ["1", "mem_x", "inv_", "mem_99999999999999999999", "x_1"])
def test_an_id_of_no_member_is_404(team, member_api, raw):
    client = member_api(team[Role.OWNER])
    assert_error(client.delete(f"{MEMBERS}/{raw}"), 404, "not_found")
    assert_error(patch(client, f"{MEMBERS}/{raw}", {"role": "viewer"}), 404, "not_found")


def test_another_projects_member_id_is_404(team, member_api, bobs, bob):
    bobs_member = Membership.objects.get(project=bobs, user=bob)
    client = member_api(team[Role.OWNER])
    assert_error(client.delete(f"{MEMBERS}/mem_{bobs_member.pk}"), 404, "not_found")
    assert Membership.objects.filter(pk=bobs_member.pk).exists()


def test_an_owner_hands_the_project_over_by_making_another_owner_then_stepping_down(
    team, member_api, shop
):
    client = member_api(team[Role.OWNER])
    frank, alice = _id_of(client, "frank"), _id_of(client, "alice")
    assert patch(client, f"{MEMBERS}/{frank}", {"role": "owner"}).status_code == 200
    assert patch(client, f"{MEMBERS}/{alice}", {"role": "admin"}).status_code == 200
    roles = {m["username"]: m["role"] for m in client.get(MEMBERS).json()}
    assert (roles["frank"], roles["alice"]) == ("owner", "admin")
    assert Project.objects.get(pk=shop.pk).owner == team[Role.VIEWER]
    # alice's key acts as the admin she is now: the owner is out of its reach.
    assert_error(patch(client, f"{MEMBERS}/{frank}", {"role": "viewer"}), 403, "role_not_allowed")


def test_invitations_past_the_projects_hourly_allowance_are_429(team, member_api, mailoutbox):
    client = member_api(team[Role.ADMIN])
    for n in range(INVITATIONS_PER_HOUR):
        invited = post(client, MEMBERS, {"email": f"p{n}@example.test", "role": "viewer"})
        assert invited.status_code == 201, invited.content
    one_more = post(client, MEMBERS, {"email": "one-more@example.test", "role": "viewer"})
    assert_error(one_more, 429, "invite_limit")
    assert Invitation.objects.count() == len(mailoutbox) == INVITATIONS_PER_HOUR


def test_transferred_ownership_is_seen_in_the_list(team, member_api, shop):
    frank = Membership.objects.get(project=shop, user=team[Role.VIEWER])
    members.ownership_transfer(project=shop, membership_id=frank.pk, actor=team[Role.OWNER])
    roles = {m["username"]: m["role"] for m in member_api(team[Role.VIEWER]).get(MEMBERS).json()}
    assert (roles["frank"], roles["alice"]) == ("owner", "admin")
    assert Project.objects.get(pk=shop.pk).owner == team[Role.VIEWER]


def test_the_list_takes_the_same_queries_for_four_members_or_fourteen(
    team, member_api, shop, django_assert_num_queries
):
    client = member_api(team[Role.VIEWER])
    client.get(MEMBERS)  # the key's cache is warm, as in steady use
    with django_assert_num_queries(QUERIES):
        assert len(client.get(MEMBERS).json()) == 4
    for n in range(10):
        user = make_user(f"extra{n}")
        members.member_add(project=shop, user=user, role="viewer", actor=None)
    with django_assert_num_queries(QUERIES):
        assert len(client.get(MEMBERS).json()) == 14
