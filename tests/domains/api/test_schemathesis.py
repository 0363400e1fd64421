"""Schemathesis (v4) over the domains API's operations, as tests/pets/api/test_schemathesis.py
runs it over pets': through the WSGI app with alice's key, failing on any server error or
any response the document does not describe (status, content type, headers, body).

In positive mode the path names alice's `shop` and (but for DELETE) its live
www.example.test, so the generated bodies reach the services and their refusals; in
negative mode the path is as generated too, and nearly everything is a documented 400
or 404.
"""

from __future__ import annotations

import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from tests.pets.api.test_schemathesis import CHECKS

OPERATIONS = [
    ("/projects", "GET"),
    ("/projects/{slug}/domains", "GET"),
    ("/projects/{slug}/domains", "POST"),
    ("/projects/{slug}/domains/{hostname}", "GET"),
    ("/projects/{slug}/domains/{hostname}", "DELETE"),
    ("/projects/{slug}/domains/{hostname}/verify", "POST"),
    ("/projects/{slug}/primary-domain", "PUT"),
    ("/projects/{slug}/primary-domain", "DELETE"),
    ("/projects/{slug}/redirects", "GET"),
    ("/projects/{slug}/redirects", "POST"),
    ("/projects/{slug}/redirects/{id}", "DELETE"),
    ("/projects/{slug}/webhooks", "GET"),
    ("/projects/{slug}/webhooks", "POST"),
    ("/projects/{slug}/webhooks/{id}", "GET"),
    ("/projects/{slug}/webhooks/{id}", "DELETE"),
    ("/projects/{slug}/webhooks/{id}/deliveries", "GET"),
    ("/projects/{slug}/audit-log", "GET"),
    ("/projects/{slug}/members", "GET"),
    ("/projects/{slug}/members", "POST"),
    ("/projects/{slug}/members/{id}", "GET"),
    ("/projects/{slug}/members/{id}", "PATCH"),
    ("/projects/{slug}/members/{id}", "DELETE"),
]
POSTS = [(path, method) for path, method in OPERATIONS if method == "POST"]

RUNS = [
    pytest.param(path, method, mode, False, id=f"{method} {path} {mode}")
    for path, method in OPERATIONS
    for mode in ("positive", "negative")
] + [
    pytest.param(path, method, "positive", True, id=f"{method} {path} positive keyed")
    for path, method in POSTS
]


@pytest.mark.parametrize(("path", "method", "mode", "keyed"), RUNS)
def test_the_domains_api_conforms_to_its_own_document(
    openapi_schema, api, alice_key, furnished, path, method, mode, keyed
):
    operation = openapi_schema[path][method]
    auth = {"Authorization": f"Bearer {alice_key.plaintext}"}

    @given(case=operation.as_strategy(generation_mode=schemathesis.GenerationMode(mode)))
    @hypothesis_settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case):
        if mode == "positive" and case.path_parameters:
            case.path_parameters["slug"] = "shop"
            if "hostname" in case.path_parameters and method != "DELETE":
                case.path_parameters["hostname"] = "www.example.test"
        headers = {**auth, **({"Idempotency-Key": uuid.uuid4().hex} if keyed else {})}
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()
