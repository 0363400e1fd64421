"""Schemathesis (v4) against the app, with the project's own OpenAPI document.

Every generated request is sent through the WSGI app with a real API key; the
run fails on any server error or any response (status, content type, headers,
body) that the document does not describe. Negative mode sends invalid data
through the same checks (schemathesis' `negative_data_rejection` is not used:
unknown query parameters are deliberately ignored, see docs/decisions/pets.md).
Bounded: 25 examples per operation
and mode, derandomized, so it is fast and repeatable.
"""

from __future__ import annotations

import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from pets.services import demo_categories_load

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
OPERATIONS = [
    ("/pets", "GET"),
    ("/pets", "POST"),
    ("/pets/{petId}", "GET"),
    ("/categories", "GET"),
]


def _fresh_idempotency_key() -> dict[str, str]:
    # A new key per case: the same key with another body is a (documented) 422.
    return {"Idempotency-Key": uuid.uuid4().hex}


RUNS = [
    pytest.param(path, method, mode, None, id=f"{method} {path} {mode}")
    for path, method in OPERATIONS
    for mode in ("positive", "negative")
] + [
    # createPet with an Idempotency-Key: its bodies are fingerprinted before validation.
    pytest.param("/pets", "POST", mode, _fresh_idempotency_key, id=f"POST /pets {mode} keyed")
    for mode in ("positive", "negative")
]


@pytest.mark.parametrize(("path", "method", "mode", "extra_headers"), RUNS)
def test_the_app_conforms_to_its_own_document(
    openapi_schema, api, alice_key, make_pet, path, method, mode, extra_headers
):
    demo_categories_load()  # valid categoryIds (1..5) for generated pets
    make_pet("Rex")
    operation = openapi_schema[path][method]
    generation_mode = schemathesis.GenerationMode(mode)
    auth = {"Authorization": f"Bearer {alice_key.plaintext}"}

    @given(case=operation.as_strategy(generation_mode=generation_mode))
    @hypothesis_settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case):
        headers = {**auth, **(extra_headers() if extra_headers else {})}
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()
