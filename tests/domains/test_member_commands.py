"""Staff's member commands: `invitemember` mails the invitation and prints its link,
`addmember` adds an existing user; each refusal is one line naming what to change."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from domains.models import Invitation, Membership
from domains.services import invitations

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_invitemember_mails_and_prints_the_link(shop, smtp_server, invitation_counts):
    output = run("invitemember", "shop", "Grace@example.test", "--role", "admin")
    invitation = Invitation.objects.get()
    assert (invitation.email, invitation.role, invitation.invited_by) == (
        "grace@example.test", "admin", None,
    )  # fmt: skip
    link = output.strip().splitlines()[-1]
    assert "/dashboard/invitations/" in link
    assert link in smtp_server.text(smtp_server.messages[0])
    secret = link.rstrip("/").rsplit("/", 1)[1]
    assert invitations.invitation_read(token=secret).pk == invitation.pk


def test_addmember_adds_an_existing_user_with_the_role(shop, bob):
    assert run("addmember", "shop", "bob", "--role", "developer").strip() == (
        "Added bob to shop as developer."
    )
    assert Membership.objects.get(project=shop, user=bob).role == "developer"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("addmember", "nosuch", "bob", "--role", "viewer"), "No project 'nosuch'"),
        (("addmember", "shop", "nobody", "--role", "viewer"), "No user 'nobody'"),
        (("addmember", "shop", "bob", "--role", "king"), "Unknown role 'king'"),
        (("addmember", "shop", "alice", "--role", "viewer"), "already a member"),
        (("invitemember", "shop", "not-an-address", "--role", "viewer"), "not an email"),
        (("invitemember", "shop", "g@example.test", "--role", "king"), "Unknown role 'king'"),
        (("invitemember", "nosuch", "g@example.test", "--role", "viewer"), "No project"),
    ],
)
def test_a_refusal_is_one_line(shop, bob, args, says):
    with pytest.raises(CommandError) as refused:
        run(*args)
    assert says in str(refused.value)
    assert "\n" not in str(refused.value)
    assert Membership.objects.filter(project=shop).count() == 1
