"""A project's people through the services: invitations (mailed through a real SMTP
server), acceptance, role changes, removal, ownership and the last-owner rule, which holds
under concurrent demotions on two database connections."""

from __future__ import annotations

import hashlib
import re
import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, connections
from django.utils import timezone

from domains.choices import AuditAction, Role
from domains.models import AuditEntry, Invitation, Membership, Project
from domains.policy import INVITATION_VALID, INVITATIONS_PER_HOUR
from domains.services import invitations, members
from tests.fixtures.people import make_user
from tests.processes import wait_for

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://\S+/dashboard/invitations/(\S+)/")


def _code(call) -> str:
    with pytest.raises(ValidationError) as refused:
        call()
    return refused.value.error_list[0].code or ""


def _member(project, user) -> Membership:
    return Membership.objects.get(project=project, user=user)


def test_an_invitation_mails_a_link_whose_secret_is_kept_only_as_its_sha256(
    smtp_server, shop, team
):
    invited = invitations.member_invite(
        project=shop, email="Grace@Example.test", role=Role.DEVELOPER, actor=team[Role.ADMIN]
    )
    [mail] = smtp_server.messages
    assert mail["To"] == "grace@example.test"
    assert mail["Subject"] == "Join Shop on Petstore"
    text = smtp_server.text(mail)
    assert "dave invites you to join Shop on Petstore as Developer" in text
    found = LINK.search(text)
    assert found is not None
    secret = found[1]
    assert invited.link.endswith(f"/dashboard/invitations/{secret}/")
    row = Invitation.objects.get()
    assert row.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(Invitation.objects.values().get())
    assert row.expires_at - row.created_at == INVITATION_VALID == timedelta(days=7)


def test_inviting_an_address_again_replaces_its_open_invitation(shop, team):
    first = invitations.member_invite(
        project=shop, email="g@example.test", role="viewer", actor=None
    )
    second = invitations.member_invite(
        project=shop, email="G@example.test", role="admin", actor=None
    )
    assert list(Invitation.objects.pending().values_list("role", flat=True)) == ["admin"]
    secret = first.link.rstrip("/").rsplit("/", 1)[1]
    assert _code(lambda: invitations.invitation_read(token=secret)) == "invitation_used"
    assert (
        invitations.invitation_read(token=second.link.rstrip("/").rsplit("/", 1)[1]).role == "admin"
    )


@pytest.mark.parametrize(
    ("inviter", "role", "allowed"),
    [
        (Role.OWNER, Role.OWNER, True),
        (Role.ADMIN, Role.ADMIN, True),
        (Role.ADMIN, Role.OWNER, False),
        (Role.DEVELOPER, Role.VIEWER, False),
        (Role.VIEWER, Role.VIEWER, False),
    ],
)
def test_who_may_invite_to_which_role(shop, team, inviter, role, allowed):
    def invite():
        return invitations.member_invite(
            project=shop, email="g@example.test", role=role, actor=team[inviter]
        )

    if allowed:
        assert invite().invitation.role == role
    else:
        assert _code(invite) == "role_not_allowed"
        assert not Invitation.objects.exists()


def test_invitations_are_limited_per_project_per_hour(shop, bobs, team):
    for n in range(INVITATIONS_PER_HOUR):
        invitations.member_invite(
            project=shop, email=f"p{n}@example.test", role="viewer", actor=None
        )
    refused = _code(
        lambda: invitations.member_invite(
            project=shop, email="one-more@example.test", role="viewer", actor=None
        )
    )
    assert refused == "invite_limit"
    assert Invitation.objects.filter(project=shop).count() == INVITATIONS_PER_HOUR
    # Another project's allowance is its own.
    invitations.member_invite(project=bobs, email="p@example.test", role="viewer", actor=None)


def test_accepting_joins_with_the_role_uses_the_link_up_and_tells_the_inviter(
    smtp_server, shop, team, django_capture_on_commit_callbacks
):
    grace = make_user("grace", email="grace@elsewhere.test")
    invited = invitations.member_invite(
        project=shop, email="grace@example.test", role="developer", actor=team[Role.OWNER]
    )
    secret = invited.link.rstrip("/").rsplit("/", 1)[1]
    with django_capture_on_commit_callbacks(execute=True):
        joined = invitations.invitation_accept(token=secret, user=grace)
    # The invitation's address need not be the account's: the link is the proof.
    assert (joined.user, joined.role) == (grace, Role.DEVELOPER)
    assert (
        _code(lambda: invitations.invitation_accept(token=secret, user=grace)) == "invitation_used"
    )
    told = smtp_server.messages[-1]
    assert told["To"] == "alice@example.test"
    assert "grace joined Shop as Developer" in smtp_server.text(told)


def test_an_expired_invitation_cannot_be_accepted(shop, team, time_machine):
    invited = invitations.member_invite(
        project=shop, email="g@example.test", role="viewer", actor=None
    )
    secret = invited.link.rstrip("/").rsplit("/", 1)[1]
    time_machine.move_to(timezone.now() + INVITATION_VALID + timedelta(seconds=1))
    grace = make_user("grace")
    assert _code(lambda: invitations.invitation_accept(token=secret, user=grace)) == (
        "invitation_expired"
    )
    assert not Membership.objects.filter(user=grace).exists()


def test_a_new_account_made_from_the_link_takes_its_address_and_joins(shop, team):
    invited = invitations.member_invite(
        project=shop, email="g@example.test", role="viewer", actor=None
    )
    secret = invited.link.rstrip("/").rsplit("/", 1)[1]
    assert (
        _code(
            lambda: invitations.invitation_accept_new_account(
                token=secret, username="dave", password="a long enough password 1"
            )
        )
        == "username_taken"
    )
    assert (
        _code(
            lambda: invitations.invitation_accept_new_account(
                token=secret, username="g", password="1"
            )
        )
        == "weak_password"
    )
    joined = invitations.invitation_accept_new_account(
        token=secret, username="grace", password="a long enough password 1"
    )
    assert joined.user.email == "g@example.test"
    assert joined.user.check_password("a long enough password 1")
    assert joined.role == Role.VIEWER


def test_a_revoked_invitation_cannot_be_accepted(shop, team):
    invited = invitations.member_invite(
        project=shop, email="g@example.test", role="admin", actor=None
    )
    secret = invited.link.rstrip("/").rsplit("/", 1)[1]
    pk = invited.invitation.pk
    dev = team[Role.DEVELOPER]
    refused = _code(
        lambda: invitations.invitation_revoke(project=shop, invitation_id=pk, actor=dev)
    )
    assert refused == "role_not_allowed"
    invitations.invitation_revoke(project=shop, invitation_id=pk, actor=team[Role.ADMIN])
    grace = make_user("grace")
    assert (
        _code(lambda: invitations.invitation_accept(token=secret, user=grace)) == "invitation_used"
    )


def test_the_last_owner_cannot_be_demoted_removed_or_leave(shop, team):
    alice = team[Role.OWNER]
    mine = _member(shop, alice)
    refusals = [
        lambda: members.member_change_role(
            project=shop, membership_id=mine.pk, role="admin", actor=alice
        ),
        lambda: members.member_remove(project=shop, membership_id=mine.pk, actor=alice),
        lambda: members.member_remove(project=shop, membership_id=mine.pk, actor=None),
        lambda: members.member_leave(project=shop, user=alice),
    ]
    assert [_code(call) for call in refusals] == ["last_owner"] * 4
    assert _member(shop, alice).role == Role.OWNER


def test_an_admin_manages_the_roles_below_owner_only(shop, team):
    dave, erin = team[Role.ADMIN], team[Role.DEVELOPER]
    owner_row = _member(shop, team[Role.OWNER])
    erin_row = _member(shop, erin)
    members.member_change_role(project=shop, membership_id=erin_row.pk, role="admin", actor=dave)
    for call in (
        lambda: members.member_change_role(
            project=shop, membership_id=erin_row.pk, role="owner", actor=dave
        ),
        lambda: members.member_change_role(
            project=shop, membership_id=owner_row.pk, role="viewer", actor=dave
        ),
        lambda: members.member_remove(project=shop, membership_id=owner_row.pk, actor=dave),
    ):
        assert _code(call) == "role_not_allowed"
    assert _member(shop, erin).role == Role.ADMIN
    assert _member(shop, team[Role.OWNER]).role == Role.OWNER


def test_with_another_owner_the_first_may_leave_and_project_owner_follows(shop, team):
    alice, dave = team[Role.OWNER], team[Role.ADMIN]
    dave_row = _member(shop, dave)
    members.member_change_role(project=shop, membership_id=dave_row.pk, role="owner", actor=alice)
    members.member_leave(project=shop, user=alice)
    assert not Membership.objects.filter(project=shop, user=alice).exists()
    assert Project.objects.get(pk=shop.pk).owner == dave


def test_transferring_ownership_swaps_the_roles_and_moves_project_owner(shop, team):
    alice, frank = team[Role.OWNER], team[Role.VIEWER]
    frank_row = _member(shop, frank)
    refused = _code(
        lambda: members.ownership_transfer(project=shop, membership_id=frank_row.pk, actor=frank)
    )
    assert refused == "role_not_allowed"
    members.ownership_transfer(project=shop, membership_id=frank_row.pk, actor=alice)
    assert _member(shop, frank).role == Role.OWNER
    assert _member(shop, alice).role == Role.ADMIN
    assert Project.objects.get(pk=shop.pk).owner == frank


@pytest.mark.django_db(transaction=True)
def test_two_owners_demoting_each_other_at_once_leave_one_owner(shop, team):
    """Each owner steps down to admin at the same moment. Both wait on the project's row
    lock, held here until both are waiting; without the lock each would count two owners
    and both would pass."""
    alice, dave = team[Role.OWNER], team[Role.ADMIN]
    dave_row = _member(shop, dave)
    members.member_change_role(project=shop, membership_id=dave_row.pk, role="owner", actor=alice)
    alice_row = _member(shop, alice)
    outcomes: dict[str, str] = {}

    def demote(name: str, membership_id: int, actor) -> None:
        try:
            members.member_change_role(
                project=shop, membership_id=membership_id, role="admin", actor=actor
            )
            outcomes[name] = "demoted"
        except ValidationError as exc:
            outcomes[name] = exc.error_list[0].code or ""
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=demote, args=("alice", alice_row.pk, alice)),
        threading.Thread(target=demote, args=("dave", dave_row.pk, dave)),
    ]
    with connections["default"].cursor() as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT id FROM domains_project WHERE id = %s FOR UPDATE", [shop.pk])
        for thread in threads:
            thread.start()

        def waiting() -> bool:
            probe = connections.create_connection("default")
            try:
                with probe.cursor() as cursor:
                    cursor.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                        "current_database() AND wait_event_type = 'Lock'"
                    )
                    return cursor.fetchone()[0] >= 2
            finally:
                probe.close()

        wait_for(waiting, what="both demotions to wait on the project's lock")
        holder.execute("COMMIT")
    for thread in threads:
        thread.join()

    assert sorted(outcomes.values()) == ["demoted", "last_owner"]
    owners = Membership.objects.filter(project=shop, role=Role.OWNER)
    assert owners.count() == 1
    assert Project.objects.get(pk=shop.pk).owner == owners.get().user
    assert connection.in_atomic_block is False


def test_closing_an_account_takes_only_the_projects_it_alone_owns(shop, team, bobs, bob):
    """The last owner's account going takes its project with it (nobody would be left to run
    it); a project with another owner stays, with that owner."""
    alice, dave = team[Role.OWNER], team[Role.ADMIN]
    members.member_change_role(project=shop, membership_id=_membership(dave), role=Role.OWNER,
                               actor=alice)  # fmt: skip
    alice.delete()
    assert Project.objects.filter(slug="shop").exists()
    assert [m.user for m in Membership.objects.filter(project__slug="shop", role=Role.OWNER)] == [
        dave
    ]
    bob.delete()
    assert not Project.objects.filter(slug="bobs").exists()
    assert AuditEntry.objects.filter(action=AuditAction.PROJECT_DELETED, target="bobs").exists()


def _membership(user) -> int:
    return Membership.objects.get(user=user).pk
