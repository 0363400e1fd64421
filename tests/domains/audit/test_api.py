"""GET /v1/projects/{slug}/audit-log: newest first, keyset paged with Link, filtered, for
the project's members with `audit:read` only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from domains.choices import AuditAction, Role
from domains.models import AuditEntry, Membership
from domains.services.audit import audit_record
from petstore.actors import Actor, ActorType, acting_as
from petstore.apikeys.scopes import Scope
from petstore.apikeys.services import api_key_issue
from tests.domains.api.helpers import SHOP
from tests.pets.helpers import assert_error, bearer

pytestmark = pytest.mark.django_db
URL = f"{SHOP}/audit-log"


def client_of(user, scopes=tuple(Scope)) -> APIClient:
    client = APIClient()
    client.credentials(**bearer(api_key_issue(user=user, scopes=scopes).plaintext))
    return client


@pytest.fixture
def logged(shop, bobs):
    """shop's 25 entries (and bob's project's one, never shown): a..y, oldest first."""
    audit_record(bobs, AuditAction.DOMAIN_ADDED, "bob.example.test")
    user = Actor(ActorType.USER, user_id=1, username="dave", ip="192.0.2.7", request_id="r1")
    key = Actor(ActorType.KEY, user_id=1, username="dave", key_prefix="pk_dave1")
    for n in range(25):
        with acting_as(key if n % 5 == 0 else user):
            audit_record(
                shop,
                AuditAction.REDIRECT_SAVED if n % 2 else AuditAction.DOMAIN_ADDED,
                f"{chr(ord('a') + n)}.example.test",
            )
    return list(AuditEntry.objects.filter(project_id=shop.pk, target__endswith=".example.test"))


def pages(client, url):
    targets, links = [], 0
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        targets += [entry["target"] for entry in response.json()]
        link = response.headers.get("Link")
        url = link[1 : link.index(">")] if link else None
        links += bool(link)
    return targets, links


def test_entries_are_newest_first_and_paged_with_link(api, logged):
    targets, links = pages(api, f"{URL}?limit=10")
    assert targets[:25] == [f"{chr(ord('a') + n)}.example.test" for n in reversed(range(25))]
    assert "bob.example.test" not in targets
    assert len(targets) == len(set(targets)) == 26  # and shop's own project.created
    assert links == 2


def test_an_entry_is_the_documented_object(api, logged):
    newest = api.get(f"{URL}?limit=1").json()[0]
    assert set(newest) == {"id", "at", "actor", "action", "target", "changes", "ip", "request_id"}
    assert newest["actor"] == {"type": "user", "username": "dave", "key_prefix": None}
    assert (newest["action"], newest["target"]) == ("domain.added", "y.example.test")
    assert (newest["ip"], newest["request_id"], newest["changes"]) == ("192.0.2.7", "r1", {})


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("action=redirect.saved", 12),
        ("actor_type=key", 5),
        ("actor=pk_dave1", 5),
        ("actor=dave", 25),  # its key's changes too: the key acts as its user
        ("actor=dave&action=domain.added&actor_type=user", 10),
    ],
)
def test_filters(api, logged, query, expected):
    targets, _ = pages(api, f"{URL}?limit=100&{query}")
    assert len(targets) == expected


def test_filters_by_time(api, logged, shop):
    old = logged[0]
    old.pk, old.target = None, "old.example.test"
    old.at = timezone.now() - timedelta(days=30)
    old.save()
    since = (timezone.now() - timedelta(days=1)).isoformat()
    recent, _ = pages(api, f"{URL}?limit=100&since={since.replace('+', '%2B')}")
    assert "old.example.test" not in recent and len(recent) == 26
    until = (timezone.now() - timedelta(days=29)).date().isoformat()
    before, _ = pages(api, f"{URL}?until={until}")
    assert before == ["old.example.test"]


@pytest.mark.parametrize("query", ["action=domain.frobnicated", "since=yesterday", "actor_type=x"])
def test_a_bad_filter_is_a_validation_error(api, logged, query):
    assert_error(api.get(f"{URL}?{query}"), 400, "validation_error")


def test_another_projects_log_is_not_found(bob_key, logged):
    assert_error(client_of(bob_key.api_key.user).get(URL), 404, "not_found")


def test_a_key_without_audit_read_is_refused(alice, logged):
    scopes = [s for s in Scope if s != Scope.AUDIT_READ]
    response = client_of(alice, scopes).get(URL)
    assert_error(response, 403, "insufficient_scope")
    assert 'scope="audit:read"' in response["WWW-Authenticate"]


def test_a_viewer_reads_the_log(bob, shop, logged):
    Membership.objects.create(project=shop, user=bob, role=Role.VIEWER)
    response = client_of(bob).get(f"{URL}?limit=5")
    assert response.status_code == 200 and len(response.json()) == 5
