"""Rate limits on /v1: per API key (API_RATE_LIMIT), per client address
(API_ADDRESS_RATE_LIMIT) and refused keys per client address (API_FAILED_KEY_RATE_LIMIT),
answered 429 with the Error body and Retry-After."""

from __future__ import annotations

import ipaddress
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from pets.models import Category, Pet
from petstore import settings as defaults
from petstore.apikeys import keycache
from petstore.apikeys.services import api_key_issue
from tests.pets.helpers import assert_error, bearer, clear_rate_limits
from tests.processes import service_env, web_server_process

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _own_address_budget(settings):
    # Addresses from TEST-NET-2, unique to this module, so counters of other tests
    # (and of other runs sharing the cache) never meet ours; cleared before and after.
    addresses = [f"198.51.100.{n}" for n in range(1, 5)]
    clear_rate_limits(*addresses)
    yield
    clear_rate_limits(*addresses)


def _client(key, address: str) -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(**bearer(key.plaintext))
    return client


def test_requests_beyond_the_rate_limit_are_429_per_key(settings, api, bob_key):
    settings.API_RATE_LIMIT = "2/min"
    assert api.get("/v1/pets").status_code == 200
    assert api.get("/v1/pets").status_code == 200
    response = api.get("/v1/pets")
    body = assert_error(response, 429, "rate_limited")
    assert int(response["Retry-After"]) > 0
    assert "Retry in" in body["message"]

    bob = APIClient()
    bob.credentials(**bearer(bob_key.plaintext))
    assert bob.get("/v1/pets").status_code == 200  # another key has its own budget


def test_a_lowered_rate_limit_still_says_when_to_retry(settings, api):
    settings.API_RATE_LIMIT = "5/min"
    for _ in range(5):
        api.get("/v1/pets")
    settings.API_RATE_LIMIT = "2/min"
    response = api.get("/v1/pets")
    assert_error(response, 429, "rate_limited")
    assert 0 < int(response["Retry-After"]) <= 60


def test_an_empty_rate_limit_turns_throttling_off(settings, api):
    settings.API_RATE_LIMIT = ""
    assert all(api.get("/v1/pets").status_code == 200 for _ in range(5))


def test_one_address_is_limited_across_all_its_keys(settings, alice_key, bob_key):
    settings.API_RATE_LIMIT = "100/min"
    settings.API_ADDRESS_RATE_LIMIT = "3/min"
    alice, bob = _client(alice_key, "198.51.100.1"), _client(bob_key, "198.51.100.1")
    assert [c.get("/v1/pets").status_code for c in (alice, bob, alice)] == [200, 200, 200]

    response = bob.get("/v1/pets")  # bob's own key is fresh, the address is not
    body = assert_error(response, 429, "rate_limited")
    assert 0 < int(response["Retry-After"]) <= 60
    assert f"Retry in {response['Retry-After']} seconds" in body["message"]
    # Another address with the same key still has its budget.
    assert _client(bob_key, "198.51.100.2").get("/v1/pets").status_code == 200


def test_writes_count_too_and_a_refused_create_stores_nothing(settings, alice_key):
    settings.API_ADDRESS_RATE_LIMIT = "1/min"
    dogs = Category.objects.create(name="Dogs")
    client = _client(alice_key, "198.51.100.3")
    assert (
        client.post("/v1/pets", {"name": "Rex", "categoryId": dogs.pk}, format="json").status_code
        == 201
    )
    refused = client.post("/v1/pets", {"name": "Max", "categoryId": dogs.pk}, format="json")
    assert_error(refused, 429, "rate_limited")
    assert list(Pet.objects.values_list("name", flat=True)) == ["Rex"]


def test_the_address_behind_trusted_proxies_is_the_client(settings, alice_key, bob_key):
    settings.API_ADDRESS_RATE_LIMIT = "1/min"
    settings.NUM_PROXIES = 1
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/24")]
    via_proxy: dict[str, Any] = {"REMOTE_ADDR": "10.0.0.1"}  # WSGI environ for the test client
    first = _client(alice_key, "10.0.0.1")
    second = _client(bob_key, "10.0.0.1")
    # Two clients behind the same proxy are two addresses...
    assert (
        first.get("/v1/pets", HTTP_X_FORWARDED_FOR="198.51.100.4", **via_proxy).status_code == 200
    )
    assert (
        second.get("/v1/pets", HTTP_X_FORWARDED_FOR="198.51.100.1", **via_proxy).status_code == 200
    )
    # ...and a client cannot escape its limit by prepending a forged hop.
    again = first.get("/v1/pets", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.4", **via_proxy)
    assert_error(again, 429, "rate_limited")


def test_an_empty_address_limit_turns_it_off(settings, alice_key):
    settings.API_ADDRESS_RATE_LIMIT = ""
    client = _client(alice_key, "198.51.100.1")
    assert all(client.get("/v1/pets").status_code == 200 for _ in range(5))


def test_limits_are_settings_with_documented_defaults():
    assert defaults.API_RATE_LIMIT == "600/min"
    assert defaults.API_ADDRESS_RATE_LIMIT == "3000/min"
    assert defaults.API_FAILED_KEY_RATE_LIMIT == "30/min"
    throttles = defaults.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]
    assert throttles == [
        "petstore.api.throttles.KeyThrottle",
        "petstore.api.throttles.AddressThrottle",
    ]


def test_a_cache_outage_lets_requests_through(settings, api, caplog):
    """Both limits fail open: a dead cache must not take the API down with it."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # the limits' Redis: nothing listens on port 1
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = "1/min"
    with caplog.at_level("WARNING", logger="petstore.api.throttles"):
        assert [api.get("/v1/pets").status_code for _ in range(3)] == [200, 200, 200]
    assert "cache unavailable" in caplog.text


def test_concurrent_requests_are_counted_exactly(transactional_db, settings, alice, tmp_path):
    """50 requests at once against a limit of 10, through a real web server with several
    workers: each is counted by one atomic Redis script, so exactly 10 pass (before, a
    read-then-write of the history let 23-31 through)."""

    key = api_key_issue(user=alice).plaintext
    env = service_env(settings, API_RATE_LIMIT="10/min", API_ADDRESS_RATE_LIMIT="")
    with web_server_process(env, tmp_path, workers=4) as (base, _):
        with requests.Session() as warm:  # every worker loads the app before the burst
            for _ in range(8):
                warm.get(base + "/healthz", timeout=10)

        def get(_: int) -> int:
            headers = {"Authorization": f"Bearer {key}"}
            return requests.get(base + "/v1/pets", headers=headers, timeout=30).status_code

        with ThreadPoolExecutor(max_workers=50) as pool:
            statuses = list(pool.map(get, range(50)))
    assert sorted(statuses).count(200) == 10, statuses
    assert statuses.count(429) == 40


def _bogus(address: str, n: int) -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(**bearer(f"pst_{n:08x}_{'A' * 43}"))
    return client


def test_an_address_past_its_refused_keys_is_answered_429_before_any_lookup(
    settings, alice_key, monkeypatch
):
    settings.API_FAILED_KEY_RATE_LIMIT = "3/min"
    address = "198.51.100.1"
    assert [_bogus(address, n).get("/v1/pets").status_code for n in range(3)] == [401] * 3

    lookups: list[str] = []
    monkeypatch.setattr(keycache, "_shared_lookup", lambda *a: lookups.append("shared"))
    with CaptureQueriesContext(connection) as queries:
        listed = _bogus(address, 3).get("/v1/pets")  # listPets' own path
        created = _bogus(address, 4).post("/v1/pets", {"name": "Rex"}, format="json")  # DRF's
    for response in (listed, created):
        body = assert_error(response, 429, "rate_limited")
        assert 0 < int(response["Retry-After"]) <= 60
        assert body["message"] == (
            "Too many refused API keys from this address. "
            f"Retry in {response['Retry-After']} seconds."
        )
    assert lookups == [] and len(queries) == 0  # no cache read, no query for a refused key
    monkeypatch.undo()

    # Counted per address: another one's refused keys are still 401s, its good keys served.
    assert _bogus("198.51.100.2", 5).get("/v1/pets").status_code == 401
    assert _client(alice_key, "198.51.100.2").get("/v1/pets").status_code == 200


def test_only_refused_keys_count_against_the_address(settings, alice_key):
    settings.API_FAILED_KEY_RATE_LIMIT = "2/min"
    good = _client(alice_key, "198.51.100.3")
    assert all(good.get("/v1/pets").status_code == 200 for _ in range(5))
    assert _bogus("198.51.100.3", 1).get("/v1/pets").status_code == 401


def test_an_empty_refused_key_limit_turns_it_off(settings):
    settings.API_FAILED_KEY_RATE_LIMIT = ""
    assert {_bogus("198.51.100.4", n).get("/v1/pets").status_code for n in range(5)} == {401}


def test_a_cache_outage_leaves_refused_keys_401s(settings, caplog):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # the limits' Redis: nothing listens on port 1
    settings.API_FAILED_KEY_RATE_LIMIT = "1/min"
    with caplog.at_level("WARNING", logger="petstore.api.throttles"):
        statuses = [_bogus("198.51.100.4", n).get("/v1/pets").status_code for n in range(3)]
    assert statuses == [401, 401, 401]
    assert "Refused keys not counted" in caplog.text
