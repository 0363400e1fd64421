"""Every role on every operation: each dashboard view and each API operation, read from the
URL configuration, tried by a member of each role, by a non-member, and by keys of each
scope, against the one table in domains/access.py.

What each may expect: a non-member gets the same 404 as a name nobody has; a member whose
role lacks the permission gets 403 (they may see the project, not do this); a key without
the operation's scope gets 403 `insufficient_scope`; anything else is let through (its
answer is then the view's own: a 200, a redirect, a form's 400). Each write is made inside a
transaction rolled back after it, so every row of the matrix starts from the same project;
a write the API answers 2xx, or a dashboard form answers with a redirect, has left entries
in the project's audit log, each naming the member (or the member's key) as the actor.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from rest_framework.test import APIClient

from domains import access
from domains.access import Permission
from domains.api.shortcuts import DomainsAPIView
from domains.choices import Role
from domains.models import AuditEntry, Membership
from petstore.apikeys.scopes import ALL_SCOPES, Scope
from petstore.apikeys.services import api_key_issue
from tests.fixtures.people import make_user
from tests.pets.helpers import bearer
from tests.security.dashboard import LINKS, OWN, PUBLIC, dashboard_urls_for, post_data

pytestmark = pytest.mark.django_db

ROLES = [Role.VIEWER, Role.DEVELOPER, Role.ADMIN, Role.OWNER]
OUTSIDER = "outsider"

# What each operation is, in the spec's words (docs/decisions/access.md): the views must
# ask for exactly this, so a view that asks for less is caught here, not only a view that
# does not ask at all. Dashboard views by URL name; API operations by method and route name.
P = Permission
DASHBOARD_SPEC = {
    "project_domains": P.DOMAINS_READ,
    "project_structure": P.DOMAINS_READ,
    "domain_detail": P.DOMAINS_READ,
    "domain_status": P.DOMAINS_READ,
    "domain_add": P.DOMAINS_ADD,
    "domain_verify": P.DOMAINS_VERIFY,
    "domain_remove": P.DOMAINS_REMOVE,
    "primary_set": P.PRIMARY_SET,
    "redirect_add": P.REDIRECTS_WRITE,
    "redirect_edit": P.REDIRECTS_WRITE,
    "redirect_delete": P.REDIRECTS_WRITE,
    "webhook_detail": P.WEBHOOKS_READ,
    "webhook_rotate": P.WEBHOOKS_WRITE,
    "webhook_secret": P.WEBHOOKS_WRITE,
    "webhook_delete": P.WEBHOOKS_WRITE,
    "webhook_redeliver": P.DELIVERIES_REDELIVER,
    "audit_log": P.AUDIT_READ,
    "members": P.MEMBERS_READ,
    "member_invite": P.MEMBERS_WRITE,
    "member_role": P.MEMBERS_WRITE,
    "member_remove": P.MEMBERS_WRITE,
    "invitation_revoke": P.MEMBERS_WRITE,
    "ownership_transfer": P.OWNERS_WRITE,
    "member_leave": P.MEMBERS_READ,
}
API_SPEC = {
    ("GET", "api-projects"): P.DOMAINS_READ,
    ("GET", "api-domains"): P.DOMAINS_READ,
    ("POST", "api-domains"): P.DOMAINS_ADD,
    ("GET", "api-domain"): P.DOMAINS_READ,
    ("DELETE", "api-domain"): P.DOMAINS_REMOVE,
    ("POST", "api-domain-verify"): P.DOMAINS_VERIFY,
    ("PUT", "api-primary-domain"): P.PRIMARY_SET,
    ("DELETE", "api-primary-domain"): P.PRIMARY_SET,
    ("GET", "api-redirects"): P.REDIRECTS_READ,
    ("POST", "api-redirects"): P.REDIRECTS_WRITE,
    ("DELETE", "api-redirect"): P.REDIRECTS_WRITE,
    ("GET", "api-webhooks"): P.WEBHOOKS_READ,
    ("POST", "api-webhooks"): P.WEBHOOKS_WRITE,
    ("GET", "api-webhook"): P.WEBHOOKS_READ,
    ("DELETE", "api-webhook"): P.WEBHOOKS_WRITE,
    ("GET", "api-webhook-deliveries"): P.DELIVERIES_READ,
    ("GET", "api-audit-log"): P.AUDIT_READ,
    ("GET", "api-members"): P.MEMBERS_READ,
    ("POST", "api-members"): P.MEMBERS_WRITE,
    ("GET", "api-member"): P.MEMBERS_READ,
    ("PATCH", "api-member"): P.MEMBERS_WRITE,
    ("DELETE", "api-member"): P.MEMBERS_WRITE,
}
# The pets API has no project and no role: its scope alone decides.
PETS_SPEC = {
    ("GET", "pets"): Scope.PETS_READ,
    ("POST", "pets"): Scope.PETS_WRITE,
    ("GET", "pet-detail"): Scope.PETS_READ,
    ("GET", "categories"): Scope.PETS_READ,
}


@pytest.fixture
def people(alices):
    """One member of shop per role (alice is an owner already), and an outsider who owns a
    project of their own."""
    shop = alices["project"]
    members: dict[str, Any] = {role: make_user(f"m-{role}") for role in ROLES}
    for role, user in members.items():
        Membership.objects.create(project=shop, user=user, role=role)
    members[OUTSIDER] = make_user("outsider")
    return members


def answer(send, *args):
    """`send(*args)`'s response, with every change it made rolled back."""
    return logged(send, *args)[0]


def logged(send, *args) -> tuple[Any, list[tuple[str, str, str]]]:
    """`send(*args)`'s response and the audit entries it wrote (action, actor type and
    username), with every change it made rolled back."""
    with transaction.atomic():
        before = AuditEntry.objects.order_by("-id").values_list("id", flat=True).first() or 0
        response = send(*args)
        written = AuditEntry.objects.filter(id__gt=before).order_by("id")
        entries = [(e.action, e.actor_type, e.actor_username) for e in written]
        transaction.set_rollback(True)
    return response, entries


def expect(role: str, permission: str | None) -> str:
    if role == OUTSIDER:
        return "not found"
    return "allowed" if permission is None or access.allows(role, permission) else "forbidden"


# --- the dashboard -------------------------------------------------------------------


def dashboard_permission(path: str) -> str | None:
    """The permission the view at `path` says it needs (domains/dashboard/lookups.py)."""
    return getattr(resolve(path).func, "permission", None)


def test_every_dashboard_view_of_a_project_names_its_permission(alices):
    for name, path in dashboard_urls_for(alices):
        if name in PUBLIC or name in OWN or name in LINKS or path == "/dashboard/":
            continue
        assert dashboard_permission(path) in Permission.values, (
            f"{name}: decorate it with project_view, domain_view or endpoint_view"
        )


def test_each_dashboard_view_asks_for_the_permission_the_spec_gives_it(alices):
    declared = {
        name: dashboard_permission(path)
        for name, path in dashboard_urls_for(alices)
        if dashboard_permission(path) is not None
    }
    assert declared == DASHBOARD_SPEC


@pytest.mark.parametrize("role", [*ROLES, OUTSIDER])
def test_each_role_on_each_dashboard_view(alices, people, role):
    client = Client()
    client.force_login(people[role])
    data = post_data(alices)
    tried = changes = 0
    for name, path in dashboard_urls_for(alices):
        permission = dashboard_permission(path)
        if permission is None:
            continue  # the user's own pages (tests/security/test_tenancy.py)
        for method in ("get", "post"):
            response, entries = logged(getattr(client, method), path, data.get(name, {}))
            if response.status_code == 405:
                continue
            tried += 1
            outcome = {404: "not found", 403: "forbidden"}.get(response.status_code, "allowed")
            assert outcome == expect(role, permission), (role, method, path, permission)
            # A change done (a form answered by a redirect) is logged as this member's; a
            # page read, or a change refused, logs nothing.
            if method == "post" and response.status_code == 302:
                changes += 1
                assert entries, (role, path)
            if method == "get" or response.status_code >= 400:
                assert entries == [], (role, method, path, entries)
            actors = {(kind, username) for _, kind, username in entries}
            assert actors <= {("user", people[role].username)}, (role, method, path, entries)
    assert tried >= 15
    if role == Role.OWNER:
        assert changes >= 10


@pytest.mark.parametrize("role", ROLES)
def test_a_page_shows_no_button_its_role_would_be_refused(alices, people, role):
    """Every form and link on every page a member of `role` can open leads somewhere their
    role may go."""
    client = Client()
    client.force_login(people[role])
    pages = [path for name, path in dashboard_urls_for(alices) if name not in PUBLIC]
    shown = set()
    for page in pages:
        response = client.get(page)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        html = response.content.decode()
        shown |= set(re.findall(r'<form[^>]*action="(/dashboard/[^"?]*)', html))
        shown |= set(re.findall(r'<a[^>]*href="(/dashboard/[^"?#]*)', html))
    assert shown
    for target in shown:
        permission = dashboard_permission(target)
        assert permission is None or access.allows(role, permission), (role, target)


# --- the API -------------------------------------------------------------------------


def _routes(resolver: URLResolver) -> list[URLPattern]:
    routes: list[URLPattern] = []
    for entry in resolver.url_patterns:
        routes += _routes(entry) if isinstance(entry, URLResolver) else [entry]
    return routes


def api_operations(alices) -> list[tuple[str, str, Any]]:
    """(method, path, view class) of every /v1 operation, from the URL configuration."""
    values = {
        "slug": "shop",
        "hostname": "www.example.com",
        "petId": "1",
    }
    found = []
    for pattern in get_resolver("petstore.urls").url_patterns:
        if not isinstance(pattern, URLResolver) or str(pattern.pattern) != "v1/":
            continue
        for route in _routes(pattern):
            view = getattr(route.callback, "view_class", None)
            if view is None or not hasattr(view, "required_scope"):
                continue  # the schema, its docs and the catch-all
            template = str(route.pattern)
            kwargs = dict(values)
            kwargs["id"] = {
                "api-webhook": str(alices["endpoint"].pk),
                "api-webhook-deliveries": str(alices["endpoint"].pk),
                "api-member": f"mem_{alices['member'].pk}",
            }.get(route.name or "", str(alices["entry"].pk))
            path = "/v1/" + re.sub(r"<\w+:(\w+)>", r"{\1}", template).format(**kwargs)
            for method in ("get", "post", "put", "patch", "delete"):
                if hasattr(view, method):
                    found.append((method, path, view))
    return found


def send(client, method: str, path: str):
    if method in ("post", "put", "patch"):
        return client.generic(method.upper(), path, "{}", content_type="application/json")
    return getattr(client, method)(path)


def api_client(user, scopes=ALL_SCOPES) -> APIClient:
    client = APIClient()
    client.credentials(**bearer(api_key_issue(user=user, scopes=scopes).plaintext))
    return client


def api_permission(view, method: str) -> str | None:
    return getattr(view, "permissions", {}).get(method.upper())


def test_each_api_operation_asks_for_what_the_spec_gives_it(alices):
    declared_permissions, declared_scopes = {}, {}
    for method, path, view in api_operations(alices):
        name = resolve(path).url_name
        if issubclass(view, DomainsAPIView):
            declared_permissions[(method.upper(), name)] = api_permission(view, method)
        else:
            declared_scopes[(method.upper(), name)] = view.scopes.get(method.upper())
    assert declared_permissions == API_SPEC
    assert declared_scopes == PETS_SPEC


def test_every_api_operation_names_its_scope(alices):
    operations = api_operations(alices)
    assert len(operations) >= 20
    for method, path, view in operations:
        scope = view().required_scope(type("R", (), {"method": method.upper()})())
        assert scope in Scope.values, (method, path)


@pytest.mark.parametrize("role", [*ROLES, OUTSIDER])
def test_each_role_on_each_api_operation(alices, people, role):
    client = api_client(people[role])
    changes = 0
    for method, path, view in api_operations(alices):
        if "slug" not in path and "/projects/" not in path:
            continue  # the pets API and the project list: no project, no role
        permission = api_permission(view, method)
        response, entries = logged(send, client, method, path)
        body = response.json() if response.content else {}
        outcome = {404: "not found", 403: "forbidden"}.get(response.status_code, "allowed")
        if response.status_code == 404 and body.get("message", "").startswith("No project"):
            outcome = "not found"
        elif response.status_code == 404:
            outcome = "allowed"  # the project was found; the object in it was not
        assert outcome == expect(role, permission), (role, method, path, response.content)
        if outcome == "forbidden":
            assert body["code"] == "forbidden"
        if method != "get" and response.status_code < 300:
            changes += 1
            actors = {(kind, username) for _, kind, username in entries}
            assert actors == {("key", people[role].username)}, (role, method, path, entries)
        else:
            assert entries == [], (role, method, path, entries)
    if role == Role.OWNER:
        assert changes >= 5  # the owner's writes that succeed with an empty body: deletes


@pytest.mark.parametrize("scope", sorted(Scope.values))
def test_a_key_of_each_scope_on_each_api_operation(alices, scope):
    owner = alices["project"].memberships.get(role=Role.OWNER).user
    client = api_client(owner, scopes=[scope])
    for method, path, view in api_operations(alices):
        needed = view().required_scope(type("R", (), {"method": method.upper()})())
        response = answer(send, client, method, path)
        if needed == scope:
            assert response.status_code != 403, (scope, method, path, response.content)
            continue
        assert response.status_code == 403, (scope, method, path)
        assert response.json()["code"] == "insufficient_scope"
        assert response["WWW-Authenticate"] == (
            f'Bearer realm="petstore", error="insufficient_scope", scope="{needed}"'
        )
