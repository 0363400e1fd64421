"""The Members page through the test client: who sees which controls, what each role may
post, and a removed member's session keeps nothing of the project at its next request."""

from __future__ import annotations

import pytest
from django.test import Client

from domains.choices import Role
from domains.models import Invitation, Membership
from domains.services import invitations

pytestmark = pytest.mark.django_db
PAGE = "/dashboard/projects/shop/members/"


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_viewer_sees_the_members_and_no_control_that_would_be_refused(team):
    page = _signed_in(team[Role.VIEWER]).get(PAGE)
    assert page.status_code == 200
    html = page.content.decode()
    assert all(name in html for name in ("alice", "dave", "erin", "frank"))
    for control in ("Send invitation", "Change role", "Revoke", "Transfer ownership", ">Remove<"):
        assert control not in html, control
    assert ">Leave<" in html


def test_an_admin_may_invite_below_owner_only(team, smtp_server):
    client = _signed_in(team[Role.ADMIN])
    html = client.get(PAGE).content.decode()
    assert 'value="owner"' not in html.split('id="invite"')[1]
    refused = client.post(PAGE + "invite/", {"email": "g@example.test", "role": "owner"})
    assert refused.status_code == 400
    assert not Invitation.objects.exists()
    sent = client.post(PAGE + "invite/", {"email": "g@example.test", "role": "admin"})
    assert sent.status_code == 302
    assert Invitation.objects.get().role == Role.ADMIN


def test_a_developer_may_not_post_any_change(team, shop):
    client = _signed_in(team[Role.DEVELOPER])
    frank = Membership.objects.get(project=shop, user=team[Role.VIEWER])
    for url, data in (
        (PAGE + "invite/", {"email": "g@example.test", "role": "viewer"}),
        (PAGE + f"{frank.pk}/role/", {"role": "admin"}),
        (PAGE + f"{frank.pk}/remove/", {}),
        ("/dashboard/projects/shop/owner/transfer/", {"member": frank.pk}),
    ):
        assert client.post(url, data).status_code == 403, url
    assert Membership.objects.get(pk=frank.pk).role == Role.VIEWER


def test_a_non_member_gets_404_on_every_members_url(team, shop, bob):
    client = _signed_in(bob)
    frank = Membership.objects.get(project=shop, user=team[Role.VIEWER])
    invited = invitations.member_invite(
        project=shop, email="g@example.test", role="viewer", actor=None
    )
    for method, url in (
        ("get", PAGE),
        ("post", PAGE + "invite/"),
        ("post", PAGE + f"{frank.pk}/role/"),
        ("get", PAGE + f"{frank.pk}/remove/"),
        ("post", PAGE + f"{frank.pk}/remove/"),
        ("post", f"/dashboard/projects/shop/invitations/{invited.invitation.pk}/revoke/"),
        ("post", "/dashboard/projects/shop/owner/transfer/"),
        ("get", PAGE + "leave/"),
        ("post", PAGE + "leave/"),
    ):
        assert getattr(client, method)(url).status_code == 404, url
    assert Membership.objects.filter(project=shop).count() == 4


def test_a_removed_members_session_keeps_nothing_of_the_project(team, shop):
    erin = _signed_in(team[Role.DEVELOPER])
    assert erin.get("/dashboard/projects/shop/domains/").status_code == 200
    owner = _signed_in(team[Role.OWNER])
    row = Membership.objects.get(project=shop, user=team[Role.DEVELOPER])
    assert owner.post(PAGE + f"{row.pk}/remove/").status_code == 302

    assert erin.get("/dashboard/projects/shop/domains/").status_code == 404
    assert erin.get(PAGE).status_code == 404
    assert "Shop" not in erin.get("/dashboard/").content.decode()


def test_the_last_owner_is_told_why_they_cannot_leave(team, shop):
    client = _signed_in(team[Role.OWNER])
    answer = client.post(PAGE + "leave/", follow=True)
    assert "A project always has an owner" in answer.content.decode()
    assert Membership.objects.get(project=shop, user=team[Role.OWNER]).role == Role.OWNER


def test_an_invitation_page_refuses_a_link_that_is_not_ours():
    page = Client().get("/dashboard/invitations/not-a-real-secret/")
    assert page.status_code == 400
    assert "not an invitation link of ours" in page.content.decode()
