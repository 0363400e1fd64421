"""Each change writes exactly one entry, and the entry names who made it: the member in
the dashboard, the key through the API, staff in the admin and in a command, the platform
in a task."""

from __future__ import annotations

import getpass
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from domains import tasks
from domains.choices import AuditAction
from domains.models import AuditEntry, Domain, Membership, WebhookEndpoint
from domains.services.custom_domains import domain_add
from tests.domains.api.helpers import SHOP, post
from tests.domains.test_admin import project_form

pytestmark = pytest.mark.django_db


def only(action: str) -> AuditEntry:
    """The one entry of `action` (two would be a change recorded twice)."""
    (entry,) = AuditEntry.objects.filter(action=action)
    return entry


def test_the_dashboard_records_the_member(alice_client, shop, alice):
    response = alice_client.post(
        reverse("dashboard:domain_add", args=["shop"]),
        {"hostname": "www.example.test"},
        HTTP_X_REQUEST_ID="req-dashboard-1",
    )
    assert response.status_code == 302
    entry = only(AuditAction.DOMAIN_ADDED)
    assert (entry.project_id, entry.target) == (shop.pk, "www.example.test")
    assert (entry.actor_type, entry.actor_user_id, entry.actor_username) == (
        "user", alice.pk, "alice",
    )  # fmt: skip
    assert entry.actor_key_prefix == ""
    assert (entry.ip, entry.request_id) == ("127.0.0.1", "req-dashboard-1")


def test_the_api_records_the_key_and_its_user(api, alice_key, shop, alice):
    response = post(
        api, f"{SHOP}/domains", {"hostname": "api.example.test"}, HTTP_X_REQUEST_ID="req-api-1"
    )
    assert response.status_code == 201, response.content
    entry = only(AuditAction.DOMAIN_ADDED)
    assert (entry.actor_type, entry.actor_username, entry.actor_user_id) == (
        "key",
        "alice",
        alice.pk,
    )
    assert entry.actor_key_prefix == alice_key.api_key.prefix
    assert (entry.ip, entry.request_id) == ("127.0.0.1", "req-api-1")


def test_the_admin_records_staff(client, carol, shop, alice):
    client.force_login(carol)
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    response = client.post(
        reverse("admin:domains_domain_delete", args=[domain.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    entry = only(AuditAction.DOMAIN_REMOVED)
    assert (entry.actor_type, entry.actor_username, entry.target) == (
        "staff", "carol", "www.example.test",
    )  # fmt: skip


def test_the_admin_records_a_plan_change_with_before_and_after(client, carol, shop):
    client.force_login(carol)
    url = reverse("admin:domains_project_change", args=[shop.pk])
    response = client.post(url, project_form(shop, plan="business"))
    assert response.status_code == 302
    entry = only(AuditAction.PLAN_CHANGED)
    assert (entry.actor_type, entry.actor_username) == ("staff", "carol")
    assert entry.changes == {"plan": ["pro", "business"]}
    assert not AuditEntry.objects.filter(action=AuditAction.PROJECT_CHANGED).exists()


def test_a_staff_member_of_a_project_is_a_member_in_the_dashboard(client, carol, shop):
    """Staff are staff in the admin only: elsewhere they act as anyone signed in."""
    Membership.objects.create(project=shop, user=carol, role="developer")
    client.force_login(carol)
    client.post(reverse("dashboard:domain_add", args=["shop"]), {"hostname": "www.example.test"})
    assert only(AuditAction.DOMAIN_ADDED).actor_type == "user"


def test_a_command_records_staff_by_actor_or_os_user(shop, carol):
    call_command("adddomain", "shop", "one.example.test", "--actor", "carol", stdout=None)
    call_command("removedomain", "one.example.test", stdout=None)
    added, removed = only(AuditAction.DOMAIN_ADDED), only(AuditAction.DOMAIN_REMOVED)
    assert (added.actor_type, added.actor_username, added.actor_user_id) == (
        "staff",
        "carol",
        carol.pk,
    )
    assert (removed.actor_type, removed.actor_username) == ("staff", getpass.getuser())
    assert removed.ip is None and removed.request_id == ""


def test_a_task_records_the_platform(shop, alice, settings, time_machine):
    domain_add(project=shop, hostname="stale.example.test", actor=alice)
    time_machine.move_to(timezone.now() + timedelta(days=settings.DOMAINS_CLAIM_EXPIRY_DAYS + 1))
    tasks.sweep()
    assert not Domain.objects.filter(hostname="stale.example.test").exists()
    entry = only(AuditAction.CLAIM_EXPIRED)
    assert (entry.actor_type, entry.actor_username, entry.actor_user_id) == ("system", "", None)
    assert entry.target == "stale.example.test"


def test_webhook_writes_never_keep_the_secret_or_the_urls_query(alice_client, shop):
    endpoint = WebhookEndpoint.objects.create(
        project=shop,
        url="https://user:pw@hooks.example.test/in?token=t0ps3cret",
        events=["domain.active"],
        secret="whsec_x",
    )
    rotated = alice_client.post(reverse("dashboard:webhook_rotate", args=[endpoint.pk]))
    assert rotated.status_code == 302
    deleted = alice_client.post(reverse("dashboard:webhook_delete", args=[endpoint.pk]))
    assert deleted.status_code == 302
    rotation, deletion = only(AuditAction.WEBHOOK_SECRET_ROTATED), only(AuditAction.WEBHOOK_DELETED)
    assert rotation.actor_type == deletion.actor_type == "user"
    assert rotation.changes == {}
    assert deletion.changes["url"] == ["https://hooks.example.test/in", None]
    text = " ".join(str(e.changes) + e.target for e in AuditEntry.objects.all())
    assert "t0ps3cret" not in text and "pw@" not in text and "whsec" not in text


def test_a_refused_change_records_nothing(api, shop):
    before = AuditEntry.objects.count()
    response = post(api, f"{SHOP}/domains", {"hostname": "localhost"})
    assert response.status_code == 400
    assert AuditEntry.objects.count() == before
