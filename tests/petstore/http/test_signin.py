"""Failed sign-ins are limited on the dashboard's form and the admin's, per
(username, address), per address and per username; staff see the attempts."""

import ipaddress

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.test import override_settings

from tests.fixtures.people import PASSWORD


def _sign_in(client, password, username="alice", address="203.0.113.9", path="/accounts/login/"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def _signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_sign_in_succeeds_with_the_right_password(client, alice):
    response = _sign_in(client, PASSWORD)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_sixth_failed_attempt_is_refused_even_with_the_right_password(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 5
    for _ in range(4):
        assert _sign_in(client, "wrong").status_code == 200
    assert _sign_in(client, "wrong").status_code == 429  # the fifth failure locks
    response = _sign_in(client, PASSWORD)
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed sign-in attempts. Wait 15 minutes and try again." in page
    assert "Please enter a correct username" not in page
    assert 'name="password"' in page  # the form itself, with its message
    assert not _signed_in(client)


def test_thirty_wrong_superuser_passwords_on_the_admin_then_the_right_one_is_refused(client, carol):
    for _ in range(30):
        _sign_in(client, "wrong", username="carol", path="/admin/login/?next=/admin/")
    response = _sign_in(client, PASSWORD, username="carol", path="/admin/login/?next=/admin/")
    assert response.status_code == 429
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert not _signed_in(client)
    # Axes stopped counting once the client was locked out: 5, not 30.
    assert AccessAttempt.objects.get(username="carol").failures_since_start == 5


def test_the_per_user_limit_is_per_address(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 2
    for _ in range(2):
        _sign_in(client, "wrong", address="203.0.113.9")
    assert _sign_in(client, PASSWORD, address="203.0.113.9").status_code == 429
    assert _sign_in(client, PASSWORD, address="198.51.100.4").status_code == 302


def test_one_address_trying_many_usernames_is_limited(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS_PER_ADDRESS = 3
    for name in ("a", "b", "c"):
        _sign_in(client, "wrong", username=name)
    assert _sign_in(client, PASSWORD).status_code == 429
    assert _sign_in(client, PASSWORD, address="198.51.100.4").status_code == 302


def test_one_username_guessed_from_many_addresses_is_limited(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 5
    settings.SIGNIN_MAX_ATTEMPTS_PER_USERNAME = 6
    for n in range(6):
        assert _sign_in(client, "wrong", address=f"198.51.100.{n}").status_code in (200, 429)
    response = _sign_in(client, PASSWORD, address="192.0.2.77")
    assert response.status_code == 429
    assert _sign_in(client, PASSWORD, username="bob", address="192.0.2.77").status_code != 429


def test_usernames_are_counted_whatever_their_case_and_spaces(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 3
    for name in ("alice", "Alice", " ALICE "):
        _sign_in(client, "wrong", username=name)
    assert _sign_in(client, PASSWORD).status_code == 429


def test_a_stranger_behind_the_proxy_does_not_lock_the_owner_out(client, alice, settings):
    settings.NUM_PROXIES = 1
    proxy = "10.0.0.2"  # every request arrives from the proxy
    settings.TRUSTED_PROXIES = [ipaddress.ip_network(proxy)]

    def through_proxy(password, username, client_address):
        return client.post(
            "/accounts/login/",
            {"username": username, "password": password},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=client_address,
        )

    for n in range(40):  # far past every limit that one address can reach
        through_proxy("wrong", "alice" if n % 2 else f"user{n}", "198.51.100.66")
    assert through_proxy(PASSWORD, "alice", "198.51.100.66").status_code == 429
    response = through_proxy(PASSWORD, "alice", "203.0.113.9")
    assert response.status_code == 302
    assert _signed_in(client)


def test_a_successful_sign_in_clears_that_users_failures_at_that_address(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 3
    for _ in range(2):
        _sign_in(client, "wrong")
    assert _sign_in(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(2):
        assert _sign_in(client, "wrong").status_code == 200


def test_signing_in_to_ones_own_account_does_not_clear_an_address_count(
    client, alice, bob, settings
):
    settings.SIGNIN_MAX_ATTEMPTS_PER_ADDRESS = 4
    for name in ("carol", "dave", "erin"):
        _sign_in(client, "wrong", username=name)
    assert _sign_in(client, PASSWORD, username="bob").status_code == 302
    client.logout()
    _sign_in(client, "wrong", username="frank")
    assert _sign_in(client, PASSWORD).status_code == 429


def test_staff_see_the_failed_attempts_in_the_admin(client, alice, carol):
    _sign_in(client, "wrong", address="198.51.100.23")
    client.force_login(carol)
    page = client.get("/admin/axes/accessattempt/").content.decode()
    assert "198.51.100.23" in page
    assert "alice" in page


@pytest.mark.django_db
def test_sign_in_does_not_need_the_cache(client, alice):
    """The counts are rows in the database: a cache outage changes nothing here."""
    unreachable = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
        }
    }
    with override_settings(CACHES=unreachable):
        cache.close()
        assert _sign_in(client, "wrong").status_code == 200
        assert _sign_in(client, PASSWORD).status_code == 302
