"""The account pages under /accounts/: sign in, sign out and the password change, nothing
else. No password reset answers; the password change asks the old password through the
sign-in limits and signs out every other session of the user, not this one."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import NoReverseMatch, reverse

from domains.policy import EMAIL_CONFIRMATION_MAX_AGE, EMAIL_CONFIRMATIONS_PER_HOUR
from petstore.http.reauth import REAUTHENTICATION_WINDOW, window_minutes
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.django_db
CHANGE = "/accounts/password_change/"
NEW_PASSWORD = "another long test password"


def signed_in(username: str = "alice", password: str = PASSWORD) -> Client:
    """A browser of its own, signed in through the form."""
    client = Client()
    answer = client.post("/accounts/login/", {"username": username, "password": password})
    assert answer.status_code == 302, answer.content
    return client


def change_password(client: Client, old: str = PASSWORD):
    return client.post(
        CHANGE,
        {"old_password": old, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )


def is_signed_in(client: Client) -> bool:
    return client.get("/dashboard/").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/accounts/password_reset/",
        "/accounts/password_reset/done/",
        "/accounts/reset/MQ/set-password/",
        "/accounts/reset/done/",
    ],
)
def test_no_password_reset_answers(client, alice, smtp_server, path):
    alice.email = "alice@example.test"
    alice.save()
    for method in (client.get, client.post):
        assert method(path, {"email": "alice@example.test"}).status_code == 404
    assert smtp_server.messages == []


def test_the_reset_views_have_no_url_names():
    for name in ("password_reset", "password_reset_done", "password_reset_complete"):
        with pytest.raises(NoReverseMatch):
            reverse(name)


def test_a_password_change_signs_out_the_users_other_sessions_and_keeps_this_one(alice, bob):
    laptop, phone, bobs = signed_in(), signed_in(), signed_in("bob")
    assert is_signed_in(phone)
    answer = change_password(laptop)
    assert answer.status_code == 302 and answer["Location"] == "/accounts/password_change/done/"
    assert (
        "Every other session of alice is signed out"
        in laptop.get(answer["Location"]).content.decode()
    )

    assert is_signed_in(laptop)
    stale = phone.get("/dashboard/")
    assert stale.status_code == 302 and stale["Location"].startswith("/accounts/login/")
    assert not is_signed_in(phone)  # for good, not just one request
    assert is_signed_in(bobs)
    assert (
        phone.post("/accounts/login/", {"username": "alice", "password": PASSWORD}).status_code
        == 200
    )
    signed_in(password=NEW_PASSWORD)


def test_the_old_password_is_counted_by_the_sign_in_limits(alice_client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 3
    for _ in range(2):
        wrong = change_password(alice_client, old="a guess")
        assert wrong.status_code == 200
        assert "Your old password was entered incorrectly" in wrong.content.decode()
    locked = change_password(alice_client, old="a third guess")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-in attempts" in page and 'name="old_password"' in page
    assert change_password(alice_client).status_code == 429  # even the right one, now
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)
    # The same count as the sign-in form's: this client cannot sign in as alice either.
    assert (
        Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD}).status_code
        == 429
    )


def test_the_admins_password_change_is_the_account_pages(carol):
    client = signed_in("carol")
    answer = client.get("/admin/password_change/")
    assert answer.status_code == 302 and answer["Location"] == CHANGE
    assert change_password(client).status_code == 302
    assert get_user_model().objects.get(username="carol").check_password(NEW_PASSWORD)


def test_the_security_record_states_the_window_and_limits_as_declared():
    decisions = (settings.BASE_DIR / "docs/decisions/security.md").read_text()
    assert REAUTHENTICATION_WINDOW.total_seconds() == window_minutes() * 60
    assert f"`REAUTHENTICATION_WINDOW` ({window_minutes()} minutes" in decisions
    assert f"`EMAIL_CONFIRMATIONS_PER_HOUR`, {EMAIL_CONFIRMATIONS_PER_HOUR})" in decisions
    assert f"`EMAIL_CONFIRMATION_MAX_AGE` ({EMAIL_CONFIRMATION_MAX_AGE.days} days)" in decisions
