"""The key lookup cache: a revoked key, or a deactivated user's, is refused at once
by every process, although requests are served from a copy of the key's row."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from petstore.apikeys import keycache
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
