"""getPet: GET /v1/pets/{petId} — deprecated, with Deprecation/Sunset/Link, 410 from sunset."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from rest_framework.test import APIClient

from petstore.apikeys.services import api_key_issue
from tests.pets.helpers import assert_error, bearer

SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
DEPRECATION = "@1793491200"  # 2026-11-01T00:00:00Z


def assert_deprecation_headers(response):
    assert response["Deprecation"] == DEPRECATION
    assert response["Sunset"] == SUNSET
    links = [part.strip() for part in response["Link"].split(",")]
    assert '</v1/pets>; rel="successor-version"' in links
    assert any('rel="deprecation"' in link for link in links)


def test_deprecation_is_one_rfc_9745_date():
    assert datetime.fromtimestamp(int(DEPRECATION[1:]), UTC) == datetime(2026, 11, 1, tzinfo=UTC)


def test_it_returns_the_pet(api, make_pet, dogs):
    rex = make_pet("Rex", status="pending")
    response = api.get(f"/v1/pets/{rex.id}")
    assert response.status_code == 200
    assert response.json() == {
        "id": rex.id,
        "name": "Rex",
        "categoryId": dogs.id,
        "status": "pending",
    }
    assert_deprecation_headers(response)


def test_an_unknown_id_is_a_404_error_with_the_deprecation_headers(api):
    response = api.get("/v1/pets/424242")
    body = assert_error(response, 404, "not_found")
    assert body["message"] == "No pet with id 424242."
    assert_deprecation_headers(response)


@pytest.mark.parametrize("pet_id", [str(2**63), "99999999999999999999999999", "0"])
def test_ids_beyond_int64_or_zero_are_404_not_a_crash(api, pet_id):
    assert_error(api.get(f"/v1/pets/{pet_id}"), 404, "not_found")


@pytest.mark.parametrize("pet_id", ["abc", "-1", "1.5", "%C3%86", "١"])
def test_a_non_integer_id_is_a_404_error_with_the_deprecation_headers(api, pet_id):
    response = api.get(f"/v1/pets/{pet_id}")
    assert_error(response, 404, "not_found")
    assert_deprecation_headers(response)


def test_a_deeper_path_is_an_unknown_path(api):
    assert_error(api.get("/v1/pets/1/photos"), 404, "not_found")


def test_unauthenticated_requests_also_carry_the_deprecation_headers(anon, make_pet):
    response = anon.get(f"/v1/pets/{make_pet().id}")
    assert_error(response, 401, "unauthorized")
    assert_deprecation_headers(response)


def test_other_methods_are_405_with_the_deprecation_headers(api, make_pet):
    response = api.delete(f"/v1/pets/{make_pet().id}")
    assert_error(response, 405, "method_not_allowed")
    assert_deprecation_headers(response)


def api_now(user) -> APIClient:
    """A client with a key made at the (travelled) present: every key ends within a year."""
    client = APIClient()
    client.credentials(**bearer(api_key_issue(user=user).plaintext))
    return client


def test_it_still_answers_the_second_before_sunset(alice, make_pet):
    rex = make_pet()
    with time_machine.travel(datetime(2030, 12, 4, 23, 59, 59, tzinfo=UTC), tick=False):
        assert api_now(alice).get(f"/v1/pets/{rex.id}").status_code == 200


@pytest.mark.parametrize(
    "moment",
    [datetime(2030, 12, 5, tzinfo=UTC), datetime(2031, 6, 1, 12, tzinfo=UTC)],
    ids=["sunset", "after"],
)
def test_from_the_sunset_date_it_answers_410_gone(alice, make_pet, moment):
    rex = make_pet()
    with time_machine.travel(moment, tick=False):
        response = api_now(alice).get(f"/v1/pets/{rex.id}")
    body = assert_error(response, 410, "gone")
    assert "GET /v1/pets" in body["message"]
    assert_deprecation_headers(response)


def test_after_sunset_the_list_still_works(alice, make_pet):
    make_pet()
    with time_machine.travel(datetime(2031, 1, 1, tzinfo=UTC), tick=False):
        assert api_now(alice).get("/v1/pets").status_code == 200
