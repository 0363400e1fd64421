"""A refusal over the API is the service's own sentence and code, the very words the
dashboard shows for the same request, with the code's status."""

from __future__ import annotations

import ast
import html
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from domains.api.errors import REFUSAL_STATUS
from domains.models import Domain
from domains.services.custom_domains import domain_add
from tests.domains.api.helpers import SHOP, post, put
from tests.pets.helpers import assert_error
from tests.processes import ROOT


def _dashboard_says(alice_client, project: str, hostname: str) -> str:
    page = alice_client.post(
        f"/dashboard/projects/{project}/domains/add/", {"hostname": hostname}
    ).content.decode()
    return html.unescape(page)


@pytest.mark.parametrize(
    ("project", "hostname", "status", "code"),
    [
        pytest.param("sketch", "www.example.test", 422, "plan_required", id="free-plan"),
        pytest.param("shop", "not a name", 400, "invalid_hostname", id="bad-name"),
        pytest.param("shop", "www.*.example.test", 400, "wildcard", id="wildcard"),
        pytest.param("shop", "co.uk", 400, "public_suffix", id="public-suffix"),
    ],
)
def test_a_refused_add_says_what_the_dashboard_says(
    api, alice_client, shop, sketch, project, hostname, status, code
):
    body = assert_error(
        post(api, f"/v1/projects/{project}/domains", {"hostname": hostname}), status, code
    )
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop if project == "shop" else sketch, hostname=hostname, actor=None)
    assert refused.value.code == code
    assert body["message"] == refused.value.messages[0]
    assert body["message"] in _dashboard_says(alice_client, project, hostname)
    assert set(body) == {"code", "message", "status"}
    assert not Domain.objects.exists()


def test_adding_a_name_twice_is_a_409_duplicate(api, alice_client, shop, www):
    body = assert_error(
        post(api, f"{SHOP}/domains", {"hostname": "www.example.test"}), 409, "duplicate"
    )
    assert body["message"] == "www.example.test is already added to this project."
    assert body["message"] in _dashboard_says(alice_client, "shop", "www.example.test")
    assert Domain.objects.count() == 1


def test_a_body_that_is_not_a_hostname_object_is_a_400(api, shop):
    assert_error(post(api, f"{SHOP}/domains", {"name": "x"}), 400, "validation_error")
    assert_error(post(api, f"{SHOP}/domains", ["www.example.test"]), 400, "bad_request")
    assert_error(post(api, f"{SHOP}/domains"), 400, "bad_request")


def test_verify_twice_is_a_409_check_in_progress(api, shop, www):
    assert post(api, f"{SHOP}/domains/www.example.test/verify").status_code == 202
    body = assert_error(
        post(api, f"{SHOP}/domains/www.example.test/verify"), 409, "check_in_progress"
    )
    assert body["message"].startswith("A check of this domain is already under way")


def test_a_redirect_to_a_domain_not_live_is_a_422(api, shop, www, alice):
    domain_add(project=shop, hostname="old.example.test", actor=alice)
    refused = post(api, f"{SHOP}/redirects", {"from": "old.example.test", "to": "www.example.test"})
    body = assert_error(refused, 422, "target_not_live")
    assert "is not live yet" in body["message"]


def test_a_redirect_with_an_unknown_status_is_the_services_400(api, furnished):
    refused = post(
        api,
        f"{SHOP}/redirects",
        {"from": "www.example.test", "to": "old.example.test", "status": 399},
    )
    assert_error(refused, 400, "invalid_status")


def test_the_primary_domain_cannot_be_one_that_redirects(api, furnished):
    body = assert_error(
        put(api, f"{SHOP}/primary-domain", {"hostname": "old.example.test"}),
        409,
        "primary_redirects",
    )
    assert "delete that redirect" in body["message"]


def _codes_raised_by_the_services() -> set[str]:
    """Every `code=` literal of a ValidationError the services and the name rules raise."""
    files = [*sorted((ROOT / "domains/services").glob("*.py")), ROOT / "domains/dns/hostnames.py"]
    codes = set()
    for path in files:
        for node in ast.walk(ast.parse(Path(path).read_text())):
            name = getattr(getattr(node, "func", None), "id", "")
            if not isinstance(node, ast.Call) or name not in ("ValidationError", "_refuse"):
                continue
            given = [k.value for k in node.keywords if k.arg == "code"]
            given += node.args[1:2] if name == "_refuse" else []
            codes |= {
                v.value for v in given if isinstance(v, ast.Constant) and isinstance(v.value, str)
            }
    return codes - {""}


# Raised by services the API does not call (projects are made by staff; notification
# choices and the owner's address are the dashboard's; keys are made and revoked on the
# dashboard, by `createapikey` and in the admin).
NOT_CALLED = {
    "invalid_plan", "taken", "reserved_slug", "unknown_event_type",
    "email_too_long", "invalid_email", "email_unchanged", "email_confirm_limit",
    "email_not_sent", "email_link_expired", "email_link_invalid", "email_link_other_user",
    "email_link_used",
    # Accepting an invitation (the dashboard's page), staff's addmember, the dashboard's
    # transfer of ownership.
    "invitation_invalid", "invitation_used", "invitation_expired", "username_taken",
    "invalid_username", "weak_password", "transfer_to_self",
    "unknown_scope", "key_scopes_empty", "key_scope_not_allowed", "key_project", "key_not_yours",
}  # fmt: skip


def test_every_refusal_code_of_the_services_has_a_status_and_is_documented(api, db):
    raised = _codes_raised_by_the_services()
    assert "plan_required" in raised and "wildcard" in raised  # the scan finds them
    assert raised - NOT_CALLED <= set(REFUSAL_STATUS)
    documented = api.get("/v1/openapi.json").json()["components"]["schemas"]["DomainsErrorCodeEnum"]
    assert set(REFUSAL_STATUS) <= set(documented["enum"])
