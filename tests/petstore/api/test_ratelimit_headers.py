"""RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-10) on every /v1
answer: what the limits in force are, and where the client stands in each."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from pets.models import Category
from petstore.api import ratelimitheaders
from tests.pets.helpers import assert_error, bearer, clear_rate_limits

pytestmark = pytest.mark.django_db

ADDRESS = "198.51.100.30"  # TEST-NET-2, this module's own address budget
LIMIT = re.compile(r'"(key|address)";r=(\d+);t=(\d+)')


@pytest.fixture(autouse=True)
def limits(settings):
    settings.API_RATE_LIMIT = "5/min"
    settings.API_ADDRESS_RATE_LIMIT = "20/min"
    clear_rate_limits(ADDRESS)
    yield
    clear_rate_limits(ADDRESS)


@pytest.fixture
def alice_api(alice_key) -> APIClient:
    client = APIClient(REMOTE_ADDR=ADDRESS)
    client.credentials(**bearer(alice_key.plaintext))
    return client


def limits_of(response) -> dict[str, tuple[int, int]]:
    """RateLimit as {policy: (remaining, reset)}; the whole field must be its items."""
    field = response["RateLimit"]
    items = field.split(", ")
    assert all(LIMIT.fullmatch(item) for item in items), field
    parsed = {m[1]: (int(m[2]), int(m[3])) for m in map(LIMIT.fullmatch, items) if m}
    assert all(0 < reset <= 60 for _, reset in parsed.values()), field
    return parsed


POLICY = '"key";q=5;w=60, "address";q=20;w=60'


def test_every_answer_names_the_policies_and_the_counts_go_down(alice_api):
    answers = [alice_api.get("/v1/pets") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert all(a["RateLimit-Policy"] == POLICY for a in answers)
    remaining = [{name: r for name, (r, _) in limits_of(a).items()} for a in answers]
    assert remaining == [
        {"key": 4, "address": 19},
        {"key": 3, "address": 18},
        {"key": 2, "address": 17},
    ]


def test_a_create_carries_them(alice_api):
    dogs = Category.objects.create(name="Dogs")
    response = alice_api.post("/v1/pets", {"name": "Rex", "categoryId": dogs.pk}, format="json")
    assert response.status_code == 201
    assert response["RateLimit-Policy"] == POLICY
    assert {name: r for name, (r, _) in limits_of(response).items()} == {"key": 4, "address": 19}


def test_a_401_reports_the_address_window_without_counting_it(alice_api):
    alice_api.get("/v1/pets")  # the address has used 1
    stranger = APIClient(REMOTE_ADDR=ADDRESS)
    for authorization in ({}, bearer("pst_00000000_wrong")):
        response = stranger.get("/v1/pets", **authorization)
        assert_error(response, 401, "unauthorized")
        assert response["RateLimit-Policy"] == POLICY
        assert list(limits_of(response)) == ["address"]  # no key: no key's window
        assert limits_of(response)["address"][0] == 19  # not counted
    assert limits_of(alice_api.get("/v1/pets"))["address"][0] == 18


def test_a_404_carries_them_whether_a_view_answered_or_not(alice_api):
    missing_pet = alice_api.get("/v1/pets/999")  # getPet: counted
    assert_error(missing_pet, 404, "not_found")
    assert {n: r for n, (r, _) in limits_of(missing_pet).items()} == {"key": 4, "address": 19}
    no_operation = alice_api.get("/v1/store/orders")  # no view: the address, uncounted
    assert_error(no_operation, 404, "not_found")
    assert no_operation["RateLimit-Policy"] == POLICY
    assert {n: r for n, (r, _) in limits_of(no_operation).items()} == {"address": 19}


def test_a_429_says_nothing_is_left_and_retry_after_is_the_windows_end(alice_api):
    for _ in range(5):
        assert alice_api.get("/v1/pets").status_code == 200
    refused = alice_api.get("/v1/pets")
    assert_error(refused, 429, "rate_limited")
    limits = limits_of(refused)
    assert limits["key"][0] == 0
    assert int(refused["Retry-After"]) == limits["key"][1]  # never before the reset
    assert refused["RateLimit-Policy"] == POLICY


def test_the_domains_api_carries_them(settings, alice_key, shop):
    client = APIClient(REMOTE_ADDR=ADDRESS)
    client.credentials(**bearer(alice_key.plaintext))
    response = client.get("/v1/projects")
    assert response.status_code == 200
    assert response["RateLimit-Policy"] == POLICY
    assert set(limits_of(response)) == {"key", "address"}


def test_a_disabled_limit_is_absent_and_none_sends_no_field(settings, alice_api):
    settings.API_ADDRESS_RATE_LIMIT = ""
    response = alice_api.get("/v1/pets")
    assert response["RateLimit-Policy"] == '"key";q=5;w=60'
    assert list(limits_of(response)) == ["key"]
    settings.API_RATE_LIMIT = ""
    response = alice_api.get("/v1/pets")
    assert "RateLimit-Policy" not in response
    assert "RateLimit" not in response


def test_other_rates_are_written_in_seconds(settings, alice_api):
    settings.API_RATE_LIMIT = "1000/h"
    settings.API_ADDRESS_RATE_LIMIT = "7/s"
    response = alice_api.get("/v1/pets")
    assert response["RateLimit-Policy"] == '"key";q=1000;w=3600, "address";q=7;w=1'
    assert response["RateLimit"].startswith('"key";r=999;t=')


def test_answers_outside_v1_carry_none(alice_api, client):
    assert "RateLimit-Policy" not in client.get("/healthz")
    assert "RateLimit-Policy" not in client.get("/accounts/login/")


def test_without_the_cache_the_policy_stays_and_the_counts_go(alice_api, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # the limits' Redis: nothing listens on port 1
    response = alice_api.get("/v1/pets")
    assert response.status_code == 200
    assert response["RateLimit-Policy"] == POLICY
    assert "RateLimit" not in response


def test_the_fields_are_structured_field_lists():
    # RFC 9651 lists of items: an sf-string with integer parameters, ", " between items.
    assert ratelimitheaders.policy_field("600/min", "3000/min") == (
        '"key";q=600;w=60, "address";q=3000;w=60'
    )
    assert ratelimitheaders.policy_field("", "") is None
    assert ratelimitheaders.limit_field([]) is None
