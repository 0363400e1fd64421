"""The dashboard's Audit log page and the admin's read-only list."""

from __future__ import annotations

import pytest
from django.urls import reverse

from domains.choices import AuditAction, Role
from domains.models import AuditEntry, Membership
from domains.services.audit import audit_record
from petstore.actors import Actor, ActorType, acting_as

pytestmark = pytest.mark.django_db
URL = reverse("dashboard:audit_log", args=["shop"])


@pytest.fixture
def logged(shop, bobs):
    audit_record(bobs, AuditAction.DOMAIN_ADDED, "bob.example.test")
    with acting_as(Actor(ActorType.KEY, username="alice", key_prefix="pk_alice1")):
        for n in range(60):
            audit_record(shop, AuditAction.DOMAIN_ADDED, f"d{n}.example.test")
    audit_record(shop, AuditAction.PLAN_CHANGED, "shop", changes={"plan": ("pro", "business")})


def test_the_project_page_links_to_it(alice_client, shop):
    page = alice_client.get(reverse("dashboard:project_domains", args=["shop"])).content.decode()
    assert URL in page


def test_it_shows_the_newest_first_a_page_at_a_time(alice_client, logged):
    first = alice_client.get(URL)
    assert first.status_code == 200
    page = first.content.decode()
    assert page.index("plan.changed") < page.index("d59.example.test")
    assert "pro → business" in page and "pk_alice1" in page
    assert "bob.example.test" not in page
    assert "d9.example.test" not in page  # past the first 50
    older = first.context["older"]
    second = alice_client.get(URL + older).content.decode()
    assert "d9.example.test" in second and "d59.example.test" not in second


def test_it_filters_as_the_api_does(alice_client, logged):
    response = alice_client.get(URL, {"action": "plan.changed"})
    assert [e.action for e in response.context["entries"]] == ["plan.changed"]
    response = alice_client.get(URL, {"actor": "pk_alice1", "actor_type": "key"})
    assert len(response.context["entries"]) == 50
    response = alice_client.get(URL, {"since": "2999-01-01"})
    assert response.context["entries"] == []
    bad = alice_client.get(URL, {"action": "nope"})
    assert bad.status_code == 400 and "action" in bad.content.decode()


def test_a_non_member_gets_404_and_a_viewer_reads_it(client, bob, logged, shop):
    client.force_login(bob)
    assert client.get(URL).status_code == 404
    Membership.objects.create(project=shop, user=bob, role=Role.VIEWER)
    assert client.get(URL).status_code == 200


def test_the_admin_is_read_only_for_superusers_too(client, carol, logged):
    client.force_login(carol)
    entry = AuditEntry.objects.filter(action="plan.changed").get()
    assert client.get(reverse("admin:domains_auditentry_changelist")).status_code == 200
    view = client.get(reverse("admin:domains_auditentry_change", args=[entry.pk]))
    assert view.status_code == 200 and b'name="_save"' not in view.content
    assert client.get(reverse("admin:domains_auditentry_add")).status_code == 403
    assert (
        client.get(reverse("admin:domains_auditentry_delete", args=[entry.pk])).status_code == 403
    )
    client.post(reverse("admin:domains_auditentry_change", args=[entry.pk]), {"target": "x"})
    entry.refresh_from_db()
    assert entry.target == "shop"
