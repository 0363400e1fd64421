"""The orjson renderer writes what DRF's JSONRenderer writes, byte for byte."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ErrorDetail
from rest_framework.renderers import JSONRenderer

from petstore.api.renderers import ORJSONRenderer

SAMPLES = [
    [{"id": 1, "name": "Rex", "categoryId": 2, "status": "available"}],
    [],
    {"name": 'Tom ✓ \u2028 \u2029 "q" \\ é 🐈', "id": 2**63 - 1},
    {
        "code": "validation_error",
        "message": "Invalid input: status.",
        "status": 400,
        "fields": {"status": [ErrorDetail("Must be one of: available, pending, sold.")]},
    },
    {"lazy": gettext_lazy("Not found."), "decimal": Decimal("1.50"), "none": None},
]


@pytest.mark.parametrize("data", SAMPLES)
def test_the_bytes_are_drfs(data):
    assert ORJSONRenderer().render(data) == JSONRenderer().render(data)


def test_no_data_is_an_empty_body():
    assert ORJSONRenderer().render(None) == b""


@pytest.mark.parametrize("path", ["/v1/pets", "/v1/categories"])
def test_an_indent_asked_for_in_accept_is_honoured(api, make_pet, path):
    make_pet("Rex")  # and its category: neither list is empty
    response = api.get(path, HTTP_ACCEPT="application/json; indent=2")
    assert response.status_code == 200
    assert b'\n    "name": ' in response.content  # indented
    assert response.content == JSONRenderer().render(
        response.json(), "application/json; indent=2", {}
    )


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "application/*"])
def test_json_is_served_to_any_accept_that_allows_it(api, accept):
    extra = {"HTTP_ACCEPT": accept} if accept else {}
    response = api.get("/v1/pets", **extra)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


def test_an_accept_without_json_is_a_406(api):
    response = api.get("/v1/pets", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
