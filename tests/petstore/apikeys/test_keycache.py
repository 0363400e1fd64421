"""The key lookup cache: a revoked key, or a deactivated user's, is refused at once
by every process, although requests are served from a copy of the key's row; a real
prefix with a wrong secret costs what an unknown prefix costs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIClient

from petstore.api.authentication import BearerKeyAuthentication
from petstore.apikeys import keycache
from petstore.apikeys.keyformat import hash_key
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import api_key_revoke
from tests.pets.helpers import bearer
from tests.processes import ROOT, service_env


def test_a_revoked_key_is_refused_although_its_row_was_cached(api, alice_key):
    assert api.get("/v1/pets").status_code == 200
    assert api.get("/v1/pets").status_code == 200  # served from the cache
    api_key_revoke(api_key=alice_key.api_key)
    assert api.get("/v1/pets").status_code == 401


def test_a_deactivated_users_cached_key_is_refused(api, alice):
    assert api.get("/v1/pets").status_code == 200
    alice.is_active = False
    alice.save()
    assert api.get("/v1/pets").status_code == 401
    alice.is_active = True
    alice.save()
    assert api.get("/v1/pets").status_code == 200


def test_a_deleted_users_cached_key_is_refused(api, alice):
    assert api.get("/v1/pets").status_code == 200
    alice.delete()  # cascades to the key
    assert api.get("/v1/pets").status_code == 401


def test_a_forgotten_key_is_not_cached_again_until_the_marker_expires(api, alice_key):
    prefix = alice_key.api_key.prefix
    assert api.get("/v1/pets").status_code == 200
    assert isinstance(cache.get(keycache._cache_key(prefix)), keycache.KeyRow)
    keycache.forget(prefix)
    # Still valid in the database, so served, but never from a copy read before the
    # invalidation: the marker stays, and requests read the row afresh.
    assert api.get("/v1/pets").status_code == 200
    assert cache.get(keycache._cache_key(prefix)) == keycache.STALE


def test_a_sign_in_does_not_invalidate_the_users_keys(api, alice, alice_key):
    assert api.get("/v1/pets").status_code == 200
    alice.save(update_fields=["last_login"])
    assert isinstance(cache.get(keycache._cache_key(alice_key.api_key.prefix)), keycache.KeyRow)


def test_a_wrong_secret_for_a_cached_prefix_is_still_refused(api, alice_key):
    assert api.get("/v1/pets").status_code == 200
    client = APIClient()
    client.credentials(
        **bearer(alice_key.plaintext[:-1] + ("A" if alice_key.plaintext[-1] != "A" else "B"))
    )
    assert client.get("/v1/pets").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_key_revoked_by_another_process_is_refused_here_as_soon_as_it_returns(
    api, alice_key, settings
):
    prefix = alice_key.api_key.prefix
    assert api.get("/v1/pets").status_code == 200
    local = keycache._local()
    assert local is not None and local.get(prefix) is not None  # this process holds a copy

    result = subprocess.run(
        [sys.executable, "manage.py", "revokeapikey", prefix],
        cwd=ROOT, env=service_env(settings), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    # No waiting: the command returned only after this process dropped its copy.
    assert local.get(prefix) is None
    assert api.get("/v1/pets").status_code == 401
    assert ApiKey.objects.get(prefix=prefix).revoked_at is not None


class CountingCache:
    """The real cache, each call it answers named in `calls`."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __getattr__(self, name):
        attribute = getattr(self.real, name)
        if not callable(attribute):
            return attribute

        def counted(*args, **kwargs):
            self.calls.append(name)
            return attribute(*args, **kwargs)

        return counted


def work_of(token: str, monkeypatch) -> tuple[list[str], list[str]]:
    """The shared-cache calls and the SQL one refused bearer check costs."""
    counting = CountingCache(keycache.cache)
    monkeypatch.setattr(keycache, "cache", counting)
    request = RequestFactory().get("/v1/pets", HTTP_AUTHORIZATION=f"Bearer {token}")
    with CaptureQueriesContext(connection) as queries, pytest.raises(AuthenticationFailed):
        BearerKeyAuthentication().authenticate(request)
    monkeypatch.setattr(keycache, "cache", counting.real)
    return counting.calls, [query["sql"] for query in queries]


def test_a_wrong_secret_costs_what_an_unknown_prefix_costs(api, alice_key, monkeypatch):
    assert api.get("/v1/pets").status_code == 200  # the real key's row is cached
    assert api.get("/v1/pets").status_code == 200
    prefix = alice_key.api_key.prefix
    wrong_secret = f"pst_{prefix}_{'A' * 43}"
    unknown = f"pst_{'0' * 8 if prefix != '0' * 8 else '1' * 8}_{'A' * 43}"
    for _ in range(2):  # and the same again: a refusal leaves nothing that changes the next
        known_calls, known_sql = work_of(wrong_secret, monkeypatch)
        unknown_calls, unknown_sql = work_of(unknown, monkeypatch)
        assert known_calls == unknown_calls == ["get"]  # one read, nothing written
        assert len(known_sql) == len(unknown_sql) == 1
        # The same statement, by the key's hash; only the hash differs.
        assert known_sql[0].replace(hash_key(wrong_secret), "?") == unknown_sql[0].replace(
            hash_key(unknown), "?"
        )
        assert '"key_hash" =' in known_sql[0] and prefix not in known_sql[0]
