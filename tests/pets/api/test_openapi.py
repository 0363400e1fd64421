"""The OpenAPI document at /v1/openapi.json, the docs page, and schemathesis against both."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.urls import path as route
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from petstore.api.openapi import stability

OPERATIONS = {
    ("/pets", "get"): "listPets",
    ("/pets", "post"): "createPet",
    ("/pets/{petId}", "get"): "getPet",
    ("/categories", "get"): "listCategories",
}


@pytest.fixture
def doc(anon, db):
    response = anon.get("/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def operation(doc, path, method):
    return doc["paths"][path][method]


def test_the_document_is_public_even_with_a_bad_key(anon, db):
    anon.credentials(HTTP_AUTHORIZATION="Bearer garbage")
    response = anon.get("/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


def test_it_lists_exactly_the_pets_operations_with_their_operation_ids(doc):
    # The document also holds other resources' operations (the domains API, its own tag).
    found = {
        (path, method): op["operationId"]
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if path.startswith(("/pets", "/categories"))
    }
    assert found == OPERATIONS


def test_it_lists_production_and_staging_servers_from_settings(anon, db, settings):
    settings.API_BASE_URL = "https://api.petstore.test/v1"
    settings.API_STAGING_BASE_URL = "https://staging.petstore.test/v1"
    servers = anon.get("/v1/openapi.json").json()["servers"]
    assert servers == [
        {"url": "https://api.petstore.test/v1", "description": "Production"},
        {"url": "https://staging.petstore.test/v1", "description": "Staging"},
    ]


@pytest.mark.parametrize(
    "local", ["http://localhost:8123/v1", "http://127.0.0.1:8123/v1", "http://[::1]:8123/v1"]
)
def test_a_loopback_server_is_local_development_not_production(anon, db, settings, local):
    # `make run` serves on localhost: its document must not call that Production.
    settings.API_BASE_URL = local
    servers = anon.get("/v1/openapi.json").json()["servers"]
    assert servers[0] == {"url": local, "description": "Local development"}
    assert "Production" not in {server["description"] for server in servers}


def test_the_default_servers_end_in_v1(doc, settings):
    assert [s["url"] for s in doc["servers"]] == [
        settings.API_BASE_URL,
        settings.API_STAGING_BASE_URL,
    ]
    assert all(s["url"].endswith("/v1") for s in doc["servers"])


def test_every_operation_requires_the_bearer_scheme_and_documents_401(doc):
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": doc["components"]["securitySchemes"]["bearerAuth"]["description"],
    }
    for path, method in OPERATIONS:
        op = operation(doc, path, method)
        assert op["security"] == [{"bearerAuth": []}]
        assert op["responses"]["401"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"
        }


def test_every_response_of_every_operation_documents_the_rate_limit_fields(doc):
    operations = [
        (path, method, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "responses" in op
    ]
    assert len(operations) > len(OPERATIONS)  # the domains API's too
    for path, method, op in operations:
        for status, response in op["responses"].items():
            headers = response["headers"]
            assert {"RateLimit-Policy", "RateLimit"} <= set(headers), (path, method, status)
            assert "ratelimit-headers-10" in headers["RateLimit"]["description"]
            assert not headers["RateLimit"].get("required")  # absent when limits are off


def test_every_operation_documents_the_503_of_a_database_that_cannot_answer(doc):
    operations = [
        op for item in doc["paths"].values() for op in item.values() if isinstance(op, dict)
    ]
    for op in operations:
        unavailable = op["responses"]["503"]
        assert unavailable["description"].startswith("service_unavailable")
        assert unavailable["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"
        }
        assert unavailable["headers"]["Retry-After"]["required"] is True
    assert "service_unavailable" in doc["components"]["schemas"]["ErrorCode"]["enum"]


def test_the_error_component_has_code_message_and_status(doc):
    error = doc["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"code", "message", "status"}
    assert error["properties"]["status"]["type"] == "integer"
    codes = doc["components"]["schemas"]["ErrorCode"]["enum"]
    assert "validation_error" in codes and "internal_error" in codes


def test_pet_and_new_pet_match_the_spec(doc):
    schemas = doc["components"]["schemas"]
    pet = schemas["Pet"]
    assert set(pet["properties"]) == {"id", "name", "categoryId", "status"}
    assert set(pet["required"]) == {"id", "name", "categoryId", "status"}
    assert pet["properties"]["id"]["format"] == "int64"
    assert pet["properties"]["categoryId"]["format"] == "int64"
    new_pet = schemas["NewPet"]
    assert set(new_pet["properties"]) == {"name", "categoryId", "status"}
    assert set(new_pet["required"]) == {"name", "categoryId"}
    assert new_pet["properties"]["name"]["maxLength"] == 100
    assert new_pet["properties"]["status"]["default"] == "available"
    assert schemas["PetStatus"]["enum"] == ["available", "pending", "sold"]
    assert schemas["Pets"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/Pet"},
        "description": "A JSON array of Pet.",
    }


def test_list_pets_documents_limit_status_cursor_the_link_header_and_its_400(doc):
    op = operation(doc, "/pets", "get")
    params = {p["name"]: p for p in op["parameters"]}
    assert params["limit"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 20,
    }
    assert params["status"]["schema"]["enum"] == ["available", "pending", "sold"]
    assert params["cursor"]["in"] == "query"
    assert "Link" in op["responses"]["200"]["headers"]
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Pets"
    }
    assert {"400", "401"} <= set(op["responses"])


def test_create_pet_documents_201_with_location_400_and_the_idempotency_statuses(doc):
    op = operation(doc, "/pets", "post")
    assert "Location" in op["responses"]["201"]["headers"]
    assert {"201", "400", "401", "409", "413", "415", "422"} <= set(op["responses"])
    assert [p["name"] for p in op["parameters"]] == ["Idempotency-Key"]
    assert op["requestBody"]["required"] is True


def test_get_pet_is_deprecated_and_documents_404_and_410(doc):
    op = operation(doc, "/pets/{petId}", "get")
    assert op["deprecated"] is True
    assert {"200", "401", "404", "410"} <= set(op["responses"])
    assert {"Deprecation", "Sunset"} <= set(op["responses"]["200"]["headers"])
    assert op["parameters"][0]["schema"] == {"type": "integer", "format": "int64"}
    assert "deprecated" not in operation(doc, "/pets", "get")


def test_x_stability_marks_list_categories_experimental_and_nothing_else(doc):
    marked = {
        op["operationId"]: op["x-stability"]
        for item in doc["paths"].values()
        for op in item.values()
        if "x-stability" in op
    }
    assert marked == {"listCategories": "experimental"}


def test_the_stability_decorator_sets_the_extension_from_view_code():
    class BetaView(APIView):
        @stability("beta")
        @extend_schema(operation_id="tryBeta", responses={200: None})
        def get(self, request):
            return Response()

    generated = SchemaGenerator(patterns=[route("v1/beta", BetaView.as_view())]).get_schema(
        request=None, public=True
    )
    assert generated["paths"]["/beta"]["get"]["x-stability"] == "beta"
    assert generated["paths"]["/beta"]["get"]["operationId"] == "tryBeta"


def test_the_stability_decorator_refuses_unknown_levels():
    with pytest.raises(ValueError, match="stable"):
        stability("stable")


def test_the_interactive_docs_are_public_and_served_without_internet(anon, db):
    response = anon.get("/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "cdn" not in html.lower() and "unpkg" not in html.lower()
    # Nothing inline: the configuration comes from the page's own URL, and names the document.
    assert "<style>" not in html and "<script>" not in html
    script = anon.get("/v1/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "/v1/openapi.json" in script.content.decode()
    # Under its content-hashed name (collectstatic's manifest).
    assert re.search(
        r"/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle\.[0-9a-f]{12}\.js", html
    )
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")


def test_the_document_is_valid_openapi_and_generates_without_warnings(db, tmp_path):
    out = tmp_path / "openapi.json"
    # --validate checks against the OpenAPI 3 JSON schema; --fail-on-warn turns any
    # drf-spectacular guess (an unresolvable type, a name collision) into an error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert out.stat().st_size > 0
