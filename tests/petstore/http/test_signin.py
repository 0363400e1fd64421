"""Sign-in attempts are limited per address and per (address, username)."""

import pytest
from django.core.cache import cache
from django.test import override_settings

from tests.fixtures.people import PASSWORD


@pytest.fixture(autouse=True)
def _fresh_counters():
    cache.clear()
    yield
    cache.clear()


def _sign_in(client, password, username="alice", address="203.0.113.9"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_sign_in_succeeds_with_the_right_password(client, alice):
    response = _sign_in(client, PASSWORD)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_sixth_failed_attempt_is_refused_even_with_the_right_password(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 5
    for _ in range(5):
        assert _sign_in(client, "wrong").status_code == 200
    response = _sign_in(client, PASSWORD)
    assert response.status_code == 429
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_limit_is_per_address(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 2
    for _ in range(2):
        _sign_in(client, "wrong", address="203.0.113.9")
    assert _sign_in(client, "wrong", address="203.0.113.9").status_code == 429
    assert _sign_in(client, PASSWORD, address="198.51.100.4").status_code == 302


def test_one_address_trying_many_usernames_is_limited(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS_PER_ADDRESS = 3
    for name in ("a", "b", "c"):
        _sign_in(client, "wrong", username=name)
    assert _sign_in(client, PASSWORD).status_code == 429


def test_a_successful_sign_in_clears_the_users_failures(client, alice, settings):
    settings.SIGNIN_MAX_ATTEMPTS = 3
    for _ in range(2):
        _sign_in(client, "wrong")
    assert _sign_in(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(2):
        assert _sign_in(client, "wrong").status_code == 200


def test_sign_in_still_works_when_the_cache_is_down(client, alice, caplog):
    # Nothing listens on port 1: every cache call fails with a connection error.
    unreachable = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    with override_settings(CACHES=unreachable):
        assert _sign_in(client, "wrong").status_code == 200
        response = _sign_in(client, PASSWORD)
    assert response.status_code == 302
    assert "Sign-in limit not applied, cache unavailable" in caplog.text
