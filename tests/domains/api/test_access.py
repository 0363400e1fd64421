"""A key acts as its user: another user's project, domain or redirect is not found (404,
never 403), exactly as a name that does not exist, and nothing changes."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from domains.models import Domain, DomainEvent, Project, Redirect
from tests.domains.api.helpers import SHOP, post, put
from tests.pets.helpers import assert_error

# What each path parameter of a route stands for in these tests (the operation is refused
# before it is read, so any value does; these name rows that exist for alice).
VALUES = {"slug": "shop", "hostname": "www.example.test", "id": "{redirect}"}
# What a write carries: the operation is refused before its body is read.
BODIES: dict[str, dict[str, str]] = {"post": {}, "put": {}, "patch": {}}


def _operations() -> list[tuple[str, str, dict | None]]:
    """Every operation of every route under /v1/projects/<slug>, read from the URL
    configuration: a route added later is tried too."""
    found = []
    for pattern in get_resolver("petstore.urls").url_patterns:
        if not isinstance(pattern, URLResolver) or str(pattern.pattern) != "v1/":
            continue
        for route in _routes(pattern):
            template = str(route.pattern)
            if "<str:slug>" not in template:
                continue
            path = "/v1/" + re.sub(r"<\w+:(\w+)>", lambda m: VALUES[m[1]], template)
            view = getattr(route.callback, "view_class", None)
            for method in ("get", "post", "put", "patch", "delete"):
                if view is not None and hasattr(view, method):
                    found.append((method, path, BODIES.get(method)))
    return found


def _routes(resolver: URLResolver) -> list[URLPattern]:
    routes: list[URLPattern] = []
    for entry in resolver.url_patterns:
        routes += _routes(entry) if isinstance(entry, URLResolver) else [entry]
    return routes


def _send(client, method, path, body):
    if method == "post":
        return post(client, path, body)
    if method == "put":
        return put(client, path, body)
    return getattr(client, method)(path)


OPERATIONS = [pytest.param(*op, id=f"{op[0].upper()} {op[1]}") for op in _operations()]


def test_the_operations_are_read_from_the_url_configuration():
    listed = {(method, path) for method, path, _ in _operations()}
    assert ("delete", f"{SHOP}/domains/www.example.test") in listed
    assert ("post", f"{SHOP}/webhooks") in listed  # the webhooks' routes too
    assert len(listed) >= 15


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_another_users_key_gets_404_on_every_url(bob_api, bobs, furnished, method, path, body):
    path = path.format(redirect=furnished.pk)
    before = (Domain.objects.count(), Redirect.objects.count(), DomainEvent.objects.count())

    body = assert_error(_send(bob_api, method, path, body), 404, "not_found")

    assert body["message"] == "No project 'shop'."  # what a slug nobody has answers
    after = (Domain.objects.count(), Redirect.objects.count(), DomainEvent.objects.count())
    assert after == before
    assert Project.objects.get(slug="shop").primary_domain is None


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_a_slug_nobody_has_answers_the_same(bob_api, bobs, furnished, method, path, body):
    path = path.format(redirect=furnished.pk).replace("/shop", "/nosuch")
    assert assert_error(_send(bob_api, method, path, body), 404, "not_found")["message"] == (
        "No project 'nosuch'."
    )


def test_own_project_with_another_projects_domain_or_redirect_is_404(bob_api, bobs, furnished):
    assert_error(bob_api.get("/v1/projects/bobs/domains/www.example.test"), 404, "not_found")
    assert_error(bob_api.delete(f"/v1/projects/bobs/redirects/{furnished.pk}"), 404, "not_found")
    refused = post(
        bob_api,
        "/v1/projects/bobs/redirects",
        {"from": "old.example.test", "to": "www.example.test"},
    )
    assert_error(refused, 404, "not_found")
    assert Redirect.objects.count() == 1


def test_list_projects_shows_only_the_keys_users_projects(api, bob_api, shop, sketch, bobs):
    assert [p["slug"] for p in api.get("/v1/projects").json()] == ["shop", "sketch"]
    assert bob_api.get("/v1/projects").json() == [
        {"slug": "bobs", "name": "Bob's", "plan": "business", "primary_domain": None}
    ]


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_no_key_is_401(anon, furnished, method, path, body):
    path = path.format(redirect=furnished.pk)
    assert_error(_send(anon, method, path, body), 401, "unauthorized")
