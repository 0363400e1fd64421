"""Every error under /v1 is the Error body {code, message, status} as application/json."""

from __future__ import annotations

import json
import logging

import pytest
from django.conf import settings
from django.test import RequestFactory

from pets.api import createpath, views
from pets.models import Pet
from petstore import urls
from petstore.api import errors
from petstore.api.exceptions import ErrorCode
from tests.pets.helpers import assert_error, post_json
from tests.petstore.locks import locked_elsewhere

DOCUMENTED_CODES = {
    "bad_request",
    "validation_error",
    "unauthorized",
    "not_found",
    "method_not_allowed",
    "not_acceptable",
    "idempotency_key_in_use",
    "gone",
    "payload_too_large",
    "unsupported_media_type",
    "idempotency_key_reused",
    "rate_limited",
    "key_expired",
    "forbidden",
    "insufficient_scope",
    "internal_error",
    "service_unavailable",
}


def test_the_set_of_codes_is_fixed_and_documented():
    assert set(ErrorCode.values) == DOCUMENTED_CODES
    with open(settings.BASE_DIR / "docs/decisions/pets.md") as f:
        decisions = f.read()
    assert all(f"`{code}`" in decisions for code in DOCUMENTED_CODES)


@pytest.mark.parametrize("method", ["get", "post", "put", "delete"])
@pytest.mark.parametrize(
    "path", ["/v1/", "/v1/nope", "/v1/pets/", "/v1/store/orders", "/v1/pets/1/photos"]
)
def test_unknown_paths_under_v1_are_a_404_error(anon, method, path):
    body = assert_error(getattr(anon, method)(path), 404, "not_found")
    assert path in body["message"]


def test_unknown_paths_are_404_even_with_debug_on(anon, settings):
    settings.DEBUG = True
    assert_error(anon.get("/v1/nope"), 404, "not_found")


def test_paths_outside_v1_keep_djangos_own_404(client):
    response = client.get("/no-such-page-anywhere/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


def test_a_wrong_method_is_a_405_with_allow(api):
    response = api.put("/v1/pets", {}, format="json")
    body = assert_error(response, 405, "method_not_allowed")
    assert "PUT" in body["message"]
    assert set(response["Allow"].replace(" ", "").split(",")) >= {"GET", "POST"}


def test_an_accept_header_without_json_is_a_406_error_in_json(api):
    response = api.get("/v1/pets", HTTP_ACCEPT="text/html")
    assert_error(response, 406, "not_acceptable")


def test_a_wildcard_or_json_accept_is_fine(api):
    assert api.get("/v1/pets", HTTP_ACCEPT="*/*").status_code == 200
    assert api.get("/v1/pets", HTTP_ACCEPT="application/json").status_code == 200


def test_a_non_json_content_type_is_a_415(api):
    response = api.generic("POST", "/v1/pets", "name=Rex", content_type="text/plain")
    assert_error(response, 415, "unsupported_media_type")


def test_malformed_json_is_a_400_bad_request(api):
    assert_error(
        api.generic("POST", "/v1/pets", "{", content_type="application/json"), 400, "bad_request"
    )


def test_an_oversized_body_is_a_413(api, settings, dogs):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = post_json(api, "/v1/pets", {"name": "x" * 100, "categoryId": dogs.id})
    assert_error(response, 413, "payload_too_large")


def test_a_validation_error_names_the_fields(api):
    body = assert_error(post_json(api, "/v1/pets", {"name": ""}), 400, "validation_error")
    assert set(body["fields"]) == {"name", "categoryId"}
    assert all(isinstance(m, str) for msgs in body["fields"].values() for m in msgs)


@pytest.mark.parametrize("fast", [False, True], ids=["drf", "fast path"])
def test_a_crash_in_an_operation_is_a_500_error_body_and_logged(
    api, dogs, monkeypatch, caplog, settings, fast
):
    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    # The bug in the create's service on DRF's path, in its statement on the fast path.
    settings.API_LIST_FAST_PATH = fast
    monkeypatch.setattr(*((createpath, "_insert") if fast else (views, "pet_create")), boom)
    response = post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id})
    body = assert_error(response, 500, "internal_error")
    assert "simulated bug" not in json.dumps(body)  # no internals leak
    assert "simulated bug" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_database_that_cannot_answer_is_a_503_to_retry_and_one_line_logged(api, dogs, caplog):
    caplog.set_level(logging.INFO, logger="petstore.http.unavailable")
    keyed = {"HTTP_IDEMPOTENCY_KEY": "retry-me"}
    body = {"name": "Rex", "categoryId": dogs.id}
    with locked_elsewhere(Pet):
        listed = api.get("/v1/pets")
        created = post_json(api, "/v1/pets", body, **keyed)
    for response in (listed, created):
        assert_error(response, 503, "service_unavailable")
        assert response["Retry-After"] == "5"
    outages = [r for r in caplog.records if r.getMessage().startswith("Database unavailable")]
    assert len(outages) == 2
    assert all(r.levelno == logging.ERROR and r.exc_info is None for r in outages)
    assert "lock timeout" in outages[0].getMessage()

    # Nothing was written: the same key makes the pet once the database answers again.
    assert not Pet.objects.exists()
    again = post_json(api, "/v1/pets", body, **keyed)
    assert again.status_code == 201
    assert Pet.objects.get().name == "Rex"


def test_handler500_answers_the_error_body_under_v1_only():
    request = RequestFactory().get("/v1/pets")
    response = errors.handler500(request)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {
        "code": "internal_error",
        "message": "Internal server error.",
        "status": 500,
    }
    other = errors.handler500(RequestFactory().get("/dashboard/"))
    assert other.status_code == 500
    assert not other["Content-Type"].startswith("application/json")


def test_handler404_answers_the_error_body_under_v1():
    response = errors.handler404(RequestFactory().get("/v1/x"), None)
    assert response.status_code == 404
    assert json.loads(response.content)["code"] == "not_found"


def test_the_project_uses_the_api_handlers():
    assert urls.handler404 == "petstore.api.errors.handler404"
    assert urls.handler500 == "petstore.api.errors.handler500"
