"""listPets' fast path (pets.fastpath) answers exactly what DRF's dispatch answers.

Each scenario is played twice on the same data, once with API_LIST_FAST_PATH on and
once off, from a clean rate-limit state and at the same frozen instant; status,
headers (but the per-request id and date) and body must be identical. The rest of
the list suite runs with the fast path on, the default.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.core.cache import cache
from rest_framework.test import APIClient

from pets.models import PetStatus
from pets.services import api_key_issue, api_key_revoke
from tests.pets.helpers import bearer

pytestmark = pytest.mark.django_db

ADDRESS = "198.51.100.20"  # TEST-NET-2, this module's own rate-limit budget
PER_REQUEST = {"Date", "X-Request-ID"}


def fast_path_answered(response) -> bool:
    # The fast path negotiates on Django's request itself; DRF on its own Request.
    return hasattr(response.wsgi_request, "accepted_renderer")


def play(settings, key, requests: list[tuple[str, dict]], *, fast: bool) -> list[tuple]:
    settings.API_LIST_FAST_PATH = fast
    cache.delete_many([f"throttle_api_key_{key.api_key.prefix}", f"throttle_api_address_{ADDRESS}"])
    client = APIClient(REMOTE_ADDR=ADDRESS)
    answers = []
    with time_machine.travel(datetime(2027, 3, 1, 12, 0, tzinfo=UTC), tick=False):
        for path, extra in requests:
            response = client.get(path, **{**bearer(key.plaintext), **extra})
            headers = {k: v for k, v in response.headers.items() if k not in PER_REQUEST}
            answers.append((response.status_code, headers, response.content))
            if fast and response.status_code == 200 and not extra:
                assert fast_path_answered(response), path
            if not fast:
                assert not fast_path_answered(response), path
    return answers


def assert_same(settings, key, requests):
    fast = play(settings, key, requests, fast=True)
    drf = play(settings, key, requests, fast=False)
    for request, a, b in zip(requests, fast, drf, strict=True):
        assert a == b, request


@pytest.fixture
def pets(make_pet):
    return [
        make_pet(f"P{i}", status=(PetStatus.SOLD if i % 2 else PetStatus.AVAILABLE))
        for i in range(5)
    ]


def test_pages_filters_and_the_last_page_are_answered_alike(settings, alice_key, pets):
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""
    first = APIClient().get("/v1/pets?limit=2", **bearer(alice_key.plaintext))
    next_url = first["Link"][1 : first["Link"].index(">")]
    assert_same(
        settings,
        alice_key,
        [
            ("/v1/pets", {}),
            ("/v1/pets?limit=2", {}),
            ("/v1/pets?limit=2&status=sold", {}),
            ("/v1/pets?status=available&extra=a%2Fb", {}),
            (next_url, {}),
            ("/v1/pets?limit=100", {}),  # the last page: no Link
        ],
    )


@pytest.mark.parametrize(
    "path",
    [
        "/v1/pets?limit=0",
        "/v1/pets?limit=abc",
        "/v1/pets?status=adopted",
        "/v1/pets?status=",
        "/v1/pets?cursor=forged",
    ],
)
def test_invalid_parameters_get_the_same_error(settings, alice_key, pets, path):
    assert_same(settings, alice_key, [(path, {})])


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer", "Bearer pst_0000", "Bearer pst_00000000_wrong", "Basic YWxpY2U6eA=="],
)
def test_missing_or_refused_credentials_get_the_same_401(settings, alice_key, authorization):
    assert_same(settings, alice_key, [("/v1/pets", {"HTTP_AUTHORIZATION": authorization})])


def test_a_revoked_key_gets_the_same_401(settings, alice, pets):
    key = api_key_issue(user=alice)
    api_key_revoke(api_key=key.api_key)
    assert_same(settings, key, [("/v1/pets", {})])


@pytest.mark.parametrize(
    "accept",
    ["application/json", "*/*", "application/json; indent=2", "text/html", "application/*"],
)
def test_every_accept_gets_the_same_answer(settings, alice_key, pets, accept):
    assert_same(settings, alice_key, [("/v1/pets?limit=2", {"HTTP_ACCEPT": accept})])


def test_the_rate_limit_answers_the_same_429(settings, alice_key, pets):
    settings.API_RATE_LIMIT = "2/min"
    settings.API_ADDRESS_RATE_LIMIT = ""
    assert_same(settings, alice_key, [("/v1/pets", {})] * 3)


def test_a_request_refused_by_one_limit_is_counted_once_by_the_other(settings, alice_key, pets):
    # DRF asks every throttle and counts the request in each one that allows it; the
    # fast path must not count it a second time before DRF answers the 429.
    settings.API_RATE_LIMIT = "100/min"
    settings.API_ADDRESS_RATE_LIMIT = "1/min"
    for fast in (True, False):
        answers = play(settings, alice_key, [("/v1/pets", {})] * 2, fast=fast)
        assert [status for status, _, _ in answers] == [200, 429]
        history = cache.get(f"throttle_api_key_{alice_key.api_key.prefix}")
        assert len(history) == 2, fast
