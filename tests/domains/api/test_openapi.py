"""The domains API in /v1/openapi.json: its own tag, typed bodies, the Error responses."""

from __future__ import annotations

import pytest

from tests.domains.api.test_schemathesis import OPERATIONS

OPERATION_IDS = {
    ("/projects", "get"): "listProjects",
    ("/projects/{slug}/domains", "get"): "listDomains",
    ("/projects/{slug}/domains", "post"): "addDomain",
    ("/projects/{slug}/domains/{hostname}", "get"): "getDomain",
    ("/projects/{slug}/domains/{hostname}", "delete"): "removeDomain",
    ("/projects/{slug}/domains/{hostname}/verify", "post"): "verifyDomain",
    ("/projects/{slug}/primary-domain", "put"): "setPrimaryDomain",
    ("/projects/{slug}/primary-domain", "delete"): "clearPrimaryDomain",
    ("/projects/{slug}/redirects", "get"): "listRedirects",
    ("/projects/{slug}/redirects", "post"): "createRedirect",
    ("/projects/{slug}/redirects/{id}", "delete"): "deleteRedirect",
    ("/projects/{slug}/webhooks", "get"): "listWebhooks",
    ("/projects/{slug}/webhooks", "post"): "createWebhook",
    ("/projects/{slug}/webhooks/{id}", "get"): "getWebhook",
    ("/projects/{slug}/webhooks/{id}", "delete"): "deleteWebhook",
    ("/projects/{slug}/webhooks/{id}/deliveries", "get"): "listWebhookDeliveries",
    ("/projects/{slug}/audit-log", "get"): "listAuditLog",
    ("/projects/{slug}/members", "get"): "listMembers",
    ("/projects/{slug}/members", "post"): "inviteMember",
    ("/projects/{slug}/members/{id}", "get"): "getMember",
    ("/projects/{slug}/members/{id}", "patch"): "changeMemberRole",
    ("/projects/{slug}/members/{id}", "delete"): "removeMember",
}
# Each operation's tag, by the first segment after the project.
TAGS = {"webhooks": "Webhooks", "members": "Members"}


@pytest.fixture
def doc(anon, db):
    return anon.get("/v1/openapi.json").json()


def _domains_operations(doc):
    return {
        (path, method): op
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if path.startswith("/projects")
    }


def test_the_domains_operations_are_documented_under_their_own_tag(doc):
    found = _domains_operations(doc)
    assert {key: op["operationId"] for key, op in found.items()} == OPERATION_IDS
    assert {(path, method.upper()) for path, method in found} == set(OPERATIONS)
    assert all(
        op["tags"] == [TAGS.get(path.split("/")[3] if path.count("/") > 2 else "", "Domains")]
        for (path, _), op in found.items()
    )
    assert all(op["security"] == [{"bearerAuth": []}] for op in found.values())


def test_every_domains_operation_documents_its_error_bodies(doc):
    for (path, _), op in _domains_operations(doc).items():
        responses = op["responses"]
        for status in ("401", "406", "429"):
            assert responses[status]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"
            }
        if "{slug}" in path:
            assert "404" in responses


def test_add_domain_has_typed_bodies_and_the_refusal_statuses(doc):
    add = doc["paths"]["/projects/{slug}/domains"]["post"]
    body = add["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/NewDomain"}
    created = add["responses"]["201"]["content"]["application/json"]["schema"]
    assert created == {"$ref": "#/components/schemas/Domain"}
    for status in ("400", "409", "422"):
        schema = add["responses"][status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/DomainsError"}
    assert {"Idempotency-Key"} <= {p["name"] for p in add["parameters"]}
    domain = doc["components"]["schemas"]["Domain"]["properties"]
    assert {"state", "check", "dns_records", "certificate", "claim"} <= set(domain)
    certificate = doc["components"]["schemas"]["Certificate"]["properties"]
    assert set(certificate) == {"issuer", "serial", "not_before", "expires_at", "renew_after"}
    codes = doc["components"]["schemas"]["DomainsErrorCodeEnum"]["enum"]
    assert {"plan_required", "duplicate", "not_found", "validation_error"} <= set(codes)
