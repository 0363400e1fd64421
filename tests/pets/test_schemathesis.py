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

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
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


@pytest.fixture
def schema(db, settings):
    settings.ALLOWED_HOSTS = ["localhost"]  # schemathesis' WSGI client sends Host: localhost
    # Like Django's test client: keep the test's connection (and its transaction)
    # open across requests instead of closing it at the end of each one.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        loaded = schemathesis.openapi.from_wsgi("/v1/openapi.json", get_wsgi_application())
        loaded.config.update(base_url="http://localhost/v1")
        yield loaded
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_the_app_conforms_to_its_own_document(schema, api, alice_key, make_pet, path, method, mode):
    demo_categories_load()  # valid categoryIds (1..5) for generated pets
    make_pet("Rex")
    operation = schema[path][method]
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
        case.call_and_validate(headers=auth, checks=CHECKS)

    run()
