"""A stolen session cookie is not the account. The takeover chain (move the owner's mail to
the thief's address, confirm it from there, reset the password through it, sign in) is
refused at its first step: the address change takes the current password, guessing it is
counted and locked out like a sign-in, and there is no password reset to finish with.
Mail goes through a real SMTP server on loopback."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client

from petstore.http.reauth import REAUTHENTICATION_WINDOW
from tests.fixtures.domains import T0
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.django_db
ACCOUNT = "/dashboard/settings/account/"
THIEF = "mallory@thief.example"


def test_a_stolen_session_cannot_take_the_account(alice, smtp_server, time_machine):
    alice.email = "alice@example.test"
    alice.save()
    time_machine.move_to(T0, tick=False)
    owner = Client()
    owner.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    # Just signed in, the owner is not asked the password again.
    assert owner.post(ACCOUNT, {"email": "alice@work.example"}).status_code == 302
    [to_owner] = smtp_server.messages

    # Later, someone else holds a copy of the session cookie, and nothing more.
    time_machine.move_to(T0 + REAUTHENTICATION_WINDOW + timedelta(seconds=1), tick=False)
    thief = Client()
    thief.cookies[settings.SESSION_COOKIE_NAME] = owner.cookies[settings.SESSION_COOKIE_NAME].value
    assert thief.get(ACCOUNT).status_code == 200  # the session works

    # 1. Owner mail to the thief's address: refused without the password.
    refused = thief.post(ACCOUNT, {"email": THIEF})
    assert refused.status_code == 400
    assert "Type your current password to make this change." in refused.content.decode()
    # Guessing it is a failed sign-in, locked out like one.
    for _ in range(settings.SIGNIN_MAX_ATTEMPTS - 1):
        assert thief.post(ACCOUNT, {"email": THIEF, "current_password": "guess"}).status_code == 400
    locked = thief.post(ACCOUNT, {"email": THIEF, "current_password": "guess"})
    assert locked.status_code == 429
    assert "Too many failed sign-in attempts" in locked.content.decode()
    assert smtp_server.messages == [to_owner]  # no link ever went to the thief

    # 2. A password reset through whatever address the account holds: there is none.
    for path in ("/accounts/password_reset/", "/accounts/password_reset/done/"):
        assert thief.post(path, {"email": THIEF}).status_code == 404
        assert Client().post(path, {"email": "alice@example.test"}).status_code == 404

    # 3. A new password: takes the old one (and this client is locked out anyway).
    changed = thief.post(
        "/accounts/password_change/",
        {"old_password": "guess", "new_password1": "x" * 20, "new_password2": "x" * 20},
    )
    assert changed.status_code == 429

    alice.refresh_from_db()
    assert alice.email == "alice@example.test" and alice.check_password(PASSWORD)
    assert smtp_server.messages == [to_owner]
