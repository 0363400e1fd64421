"""A project's members in a real headless Chromium against the live server: invitation by
mail (a real SMTP server), acceptance with a new account and by a signed-in user,
revocation, role change, removal, ownership transfer and the last-owner rule; the audit
log names who made each change."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from domains.choices import Role
from domains.models import AuditEntry, Membership, Project
from tests.fixtures.accessibility import assert_accessible
from tests.fixtures.browser import sign_in
from tests.fixtures.people import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LINK = re.compile(r"https?://\S+(/dashboard/invitations/\S+/)")


def _link(smtp_server, to: str) -> str:
    [mail] = [m for m in smtp_server.messages if m["To"] == to]
    found = LINK.search(smtp_server.text(mail))
    assert found is not None
    return found[1]


def _invite(page, email: str, role: str) -> None:
    form = page.locator("form#invite")
    form.get_by_label("Email address").fill(email)
    form.get_by_label("Role").select_option(label=role)
    form.get_by_role("button", name="Send invitation").click()


def _logged(project) -> list[tuple[str, str, str, str]]:
    """The project's member changes in its audit log, oldest first: what, by whom, on what."""
    entries = AuditEntry.objects.filter(project_id=project.pk, action__startswith="member.")
    return [(e.action, e.actor_type, e.actor_username, e.target) for e in entries.order_by("id")]


def _anonymous(page):
    assert page.context.browser is not None
    return page.context.browser.new_context().new_page()


def test_invite_accept_with_a_new_account_change_role_revoke_and_remove(
    shop, alice, smtp_server, invitation_counts, live_dashboard, page, screenshot
):
    url = live_dashboard.url
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.get_by_role("link", name="Shop", exact=True).click()
    page.get_by_role("link", name="Members").click()
    expect(page.get_by_role("heading", name="Members", exact=True)).to_be_visible()

    _invite(page, "grace@example.test", "Developer")
    expect(page.get_by_text("An invitation is on its way to grace@example.test.")).to_be_visible()
    expect(page.locator('tr[data-email="grace@example.test"]')).to_contain_text("Developer")
    screenshot(page, "members-invited")

    # grace opens the mailed link, signed out, and makes her account there.
    grace = _anonymous(page)
    grace.goto(url + _link(smtp_server, "grace@example.test"))
    expect(grace.get_by_role("heading", name="Join Shop as Developer")).to_be_visible()
    assert_accessible(grace)
    grace.get_by_label("Username").fill("grace")
    grace.get_by_label("Password", exact=True).fill("grace's long password 1")
    grace.get_by_label("Password again").fill("grace's long password 1")
    grace.get_by_role("button", name="Create account and join").click()
    expect(grace.get_by_text("You joined Shop as Developer.")).to_be_visible()
    assert_accessible(grace)
    assert urlsplit(grace.url).path == "/dashboard/projects/shop/domains/"
    # The link is used up.
    grace.goto(url + _link(smtp_server, "grace@example.test"))
    expect(grace.locator("#invitation-refused")).to_contain_text("was used or withdrawn")
    assert_accessible(grace)

    # alice was told, and changes grace's role.
    told = [m for m in smtp_server.messages if m["To"] == "alice@example.test"]
    assert told == []  # alice has no address: nothing to tell her at
    page.reload()
    row = page.locator('tr[data-username="grace"]')
    row.get_by_label("Role of grace").select_option(label="Admin")
    row.get_by_role("button", name="Change role").click()
    expect(page.get_by_text("grace is now Admin.")).to_be_visible()
    assert_accessible(page)

    # An invitation revoked: its link stops working.
    _invite(page, "hank@example.test", "Viewer")
    page.locator('tr[data-email="hank@example.test"]').get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("The invitation of hank@example.test was revoked.")).to_be_visible()
    hank = _anonymous(page)
    hank.goto(url + _link(smtp_server, "hank@example.test"))
    expect(hank.locator("#invitation-refused")).to_contain_text("was used or withdrawn")

    # grace removed, after a confirmation: her next page finds nothing of the project.
    page.locator('tr[data-username="grace"]').get_by_role("link", name="Remove").click()
    expect(page.get_by_text("grace loses access to Shop at once")).to_be_visible()
    screenshot(page, "members-remove-confirm")
    page.get_by_role("button", name="Remove", exact=True).click()
    expect(page.get_by_text("grace is no member any more.")).to_be_visible()
    assert_accessible(page)
    response = grace.goto(url + "/dashboard/projects/shop/domains/")
    assert response is not None and response.status == 404
    assert not Membership.objects.filter(project=shop, user__username="grace").exists()
    assert _logged(shop) == [
        ("member.invited", "user", "alice", "invitation:grace@example.test"),
        ("member.joined", "user", "grace", "member:grace"),
        ("member.role_changed", "user", "alice", "member:grace"),
        ("member.invited", "user", "alice", "invitation:hank@example.test"),
        ("member.invitation_revoked", "user", "alice", "invitation:hank@example.test"),
        ("member.removed", "user", "alice", "member:grace"),
    ]


def test_an_existing_user_signs_in_from_the_link_then_owns_the_project_by_transfer(
    shop, alice, smtp_server, invitation_counts, live_dashboard, page
):
    url = live_dashboard.url
    alice.email = "alice@example.test"
    alice.save()
    make_user("ivan", email="ivan@example.test")
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(url + "/dashboard/projects/shop/members/")
    _invite(page, "ivan@example.test", "Viewer")

    # ivan follows the link signed out, signs in from it, and comes back to accept.
    ivan = _anonymous(page)
    ivan.goto(url + _link(smtp_server, "ivan@example.test"))
    ivan.get_by_role("link", name="Sign in to accept").click()
    ivan.get_by_label("Username").fill("ivan")
    ivan.get_by_label("Password").fill(PASSWORD)
    ivan.get_by_role("button", name="Sign in").click()
    expect(ivan.get_by_role("heading", name="Join Shop as Viewer")).to_be_visible()
    assert_accessible(ivan)
    ivan.get_by_role("button", name="Accept and join").click()
    expect(ivan.get_by_text("You joined Shop as Viewer.")).to_be_visible()
    [told] = [m for m in smtp_server.messages if m["To"] == "alice@example.test"]
    assert "ivan joined Shop as Viewer" in smtp_server.text(told)

    # The last owner cannot leave; after a transfer ivan owns it and alice is an admin.
    page.reload()
    page.get_by_role("link", name="Leave").click()
    page.get_by_role("button", name="Leave the project").click()
    expect(page.get_by_text("A project always has an owner")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("Transfer to").select_option(label="ivan")
    page.get_by_role("button", name="Transfer ownership").click()
    expect(page.get_by_text("ivan owns Shop now; you are an admin.")).to_be_visible()
    expect(page.get_by_role("button", name="Transfer ownership")).to_have_count(0)
    roles = dict(Membership.objects.filter(project=shop).values_list("user__username", "role"))
    assert roles == {"alice": Role.ADMIN, "ivan": Role.OWNER}
    assert Project.objects.get(pk=shop.pk).owner == Membership.objects.get(role="owner").user
    # alice, now an admin, cannot demote the owner: no control for it on her page.
    expect(page.locator('tr[data-username="ivan"]').get_by_role("button")).to_have_count(0)
    # The refused Leave changed nothing, so it is not in the log.
    assert _logged(shop) == [
        ("member.invited", "user", "alice", "invitation:ivan@example.test"),
        ("member.joined", "user", "ivan", "member:ivan"),
        ("member.ownership_transferred", "user", "alice", "member:ivan"),
    ]
