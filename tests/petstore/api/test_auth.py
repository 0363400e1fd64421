"""Bearer API keys: hashed, prefixed, revocable, last use recorded; 401 otherwise."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from petstore.apikeys.keyformat import checksum, hash_key
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import api_key_issue, api_key_revoke
from tests.pets.helpers import assert_error, bearer

OPERATIONS = [
    ("get", "/v1/pets"),
    ("post", "/v1/pets"),
    ("get", "/v1/pets/1"),
    ("get", "/v1/categories"),
]


def call(client, method, path):
    if method == "post":
        return client.post(path, {"name": "Rex", "categoryId": 1}, format="json")
    return client.get(path)


def assert_401(response, *, invalid_token: bool):
    body = assert_error(response, 401, "unauthorized")
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert ('error="invalid_token"' in challenge) is invalid_token
    return body


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_every_operation_without_a_key_is_a_401_with_a_bearer_challenge(anon, method, path):
    body = assert_401(call(anon, method, path), invalid_token=False)
    assert body["message"] == "Authentication credentials were not provided."


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_every_operation_with_an_unknown_key_is_a_401(db, method, path):
    client = APIClient()
    client.credentials(**bearer("pst_0123abcd_" + "x" * 43))
    assert_401(call(client, method, path), invalid_token=True)


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Bearer not-a-key",
        "Bearer pst_short_secret",
        "Bearer pst_0123abcd_",
        "Bearer pst_0123ABCD_secret",
        "Bearer a b",
        "Bearer xyz_0123abcd_secret",
    ],
)
def test_a_malformed_bearer_token_is_a_401(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    body = assert_401(client.get("/v1/pets"), invalid_token=True)
    assert body["message"] == "Malformed bearer token."


@pytest.mark.parametrize("header", ["Basic YWxpY2U6c2VjcmV0", "Token abc", "pst_0123abcd_x"])
def test_another_scheme_counts_as_no_key(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert_401(client.get("/v1/pets"), invalid_token=False)


def test_the_scheme_is_case_insensitive(alice_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"bearer {alice_key.plaintext}")
    assert client.get("/v1/pets").status_code == 200


def test_a_known_prefix_with_a_wrong_secret_is_a_401(alice_key):
    prefix = alice_key.api_key.prefix
    secret = "A" * 43 if not alice_key.plaintext.startswith(f"pst_{prefix}_AAAA") else "B" * 43
    forged = f"pst_{prefix}_{secret}{checksum(f'{prefix}_{secret}')}"  # well formed
    client = APIClient()
    client.credentials(**bearer(forged))
    assert_401(client.get("/v1/pets"), invalid_token=True)


def test_a_revoked_key_is_a_401_from_the_next_request(api, alice_key):
    assert api.get("/v1/pets").status_code == 200
    assert api_key_revoke(api_key=alice_key.api_key) is True
    body = assert_401(api.get("/v1/pets"), invalid_token=True)
    assert body["message"] == "Invalid or revoked API key."
    assert api_key_revoke(api_key=alice_key.api_key) is False  # already revoked


def test_revoking_one_key_leaves_the_users_other_keys_working(alice, alice_key):
    other = api_key_issue(user=alice, name="ci")
    api_key_revoke(api_key=alice_key.api_key)
    client = APIClient()
    client.credentials(**bearer(other.plaintext))
    assert client.get("/v1/pets").status_code == 200


def test_a_key_of_a_deactivated_user_is_a_401(api, alice):
    alice.is_active = False
    alice.save()
    assert_401(api.get("/v1/pets"), invalid_token=True)


def test_only_a_hash_and_a_short_prefix_are_stored(alice_key):
    row = ApiKey.objects.get()
    assert alice_key.plaintext.startswith(f"pst_{row.prefix}_")
    assert len(row.prefix) == 8
    assert row.key_hash == hash_key(alice_key.plaintext)
    stored = " ".join(str(v) for v in ApiKey.objects.values().get().values())
    secret = alice_key.plaintext.split("_", 2)[2]
    assert secret not in stored


def test_keys_are_unique_and_carry_256_random_bits(alice):
    keys = {api_key_issue(user=alice).plaintext for _ in range(20)}
    assert len(keys) == 20
    assert all(len(k.split("_", 2)[2]) == 43 + 6 for k in keys)  # 256 bits in base62, checksum


def test_last_use_is_recorded_at_most_once_a_minute(api, alice_key):
    key = alice_key.api_key
    assert key.last_used_at is None
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        api.get("/v1/pets")
        key.refresh_from_db()
        assert key.last_used_at == start
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        api.get("/v1/pets")
        key.refresh_from_db()
        assert key.last_used_at == start  # not rewritten within the minute
    with time_machine.travel(start + timedelta(minutes=2), tick=False):
        api.get("/v1/pets")
        key.refresh_from_db()
        assert key.last_used_at == start + timedelta(minutes=2)


def test_a_failed_attempt_does_not_count_as_use(alice_key):
    client = APIClient()
    client.credentials(**bearer(alice_key.plaintext + "x"))
    client.get("/v1/pets")
    alice_key.api_key.refresh_from_db()
    assert alice_key.api_key.last_used_at is None


def test_last_use_records_the_client_address_with_the_time(alice_key):
    key = alice_key.api_key
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        APIClient(REMOTE_ADDR="203.0.113.7").get("/v1/pets", **bearer(alice_key.plaintext))
        key.refresh_from_db()
        assert (key.last_used_at, key.last_used_ip) == (start, "203.0.113.7")
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        APIClient(REMOTE_ADDR="198.51.100.9").get("/v1/pets", **bearer(alice_key.plaintext))
        key.refresh_from_db()
        assert key.last_used_ip == "203.0.113.7"  # written with the time, once a minute
    with time_machine.travel(start + timedelta(minutes=2), tick=False):
        APIClient(REMOTE_ADDR="2001:db8::1").get("/v1/pets", **bearer(alice_key.plaintext))
        key.refresh_from_db()
        assert (key.last_used_at, key.last_used_ip) == (start + timedelta(minutes=2), "2001:db8::1")
