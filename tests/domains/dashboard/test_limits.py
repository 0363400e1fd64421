"""What one project may do per hour on the dashboard, so it cannot crowd out the others:
Add domain and Verify are counted per project, and a removed name waits before it is added
again. Another project is never affected."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from domains.models import Domain, DomainEvent
from domains.services.custom_domains import domain_add

pytestmark = pytest.mark.django_db

SHOP = "/dashboard/projects/shop/domains/"
BOBS = "/dashboard/projects/bobs/domains/"


@pytest.fixture
def bob_client(bob):
    client = Client()
    client.force_login(bob)
    return client


def _add(client, base, hostname):
    return client.post(base + "add/", {"hostname": hostname}, follow=True)


def test_a_project_adds_at_most_its_hourly_number_of_domains(
    alice_client, bob_client, shop, bobs, settings, time_machine
):
    settings.DOMAINS_ADD_PER_HOUR = 3
    for i in range(3):
        assert _add(alice_client, SHOP, f"d{i}.example.test").redirect_chain
    refused = _add(alice_client, SHOP, "d3.example.test")
    assert refused.redirect_chain == []  # the form again, with the reason
    assert "This project added 3 domains in the last hour, the most allowed" in (
        refused.content.decode()
    )
    assert not Domain.objects.filter(hostname="d3.example.test").exists()
    # bob's project is not alice's: it adds as usual.
    assert _add(bob_client, BOBS, "d3.example.test").redirect_chain
    time_machine.move_to(timezone.now() + timedelta(hours=1, seconds=1))
    assert _add(alice_client, SHOP, "d3.example.test").redirect_chain


def test_a_project_chooses_verify_at_most_its_hourly_number_of_times(
    alice_client, bob_client, shop, bobs, alice, bob, settings
):
    settings.DOMAINS_VERIFY_PER_HOUR = 3
    names = [f"v{i}.example.test" for i in range(4)]
    for name in names:
        domain_add(project=shop, hostname=name, actor=alice)
    for name in names[:3]:
        page = alice_client.post(SHOP + f"{name}/verify/", follow=True).content.decode()
        assert "Check queued" in page
    page = alice_client.post(SHOP + f"{names[3]}/verify/", follow=True).content.decode()
    assert "This project chose Verify 3 times in the last hour, the most allowed" in page
    assert not DomainEvent.objects.filter(hostname=names[3], action="verify_requested").exists()
    # bob's Verify is counted for bob's project only.
    domain_add(project=bobs, hostname="v3.example.test", actor=bob)
    page = bob_client.post(BOBS + "v3.example.test/verify/", follow=True).content.decode()
    assert "Check queued" in page


def test_a_removed_name_is_added_again_only_after_the_cooldown(
    alice_client, bob_client, shop, bobs, alice, settings, time_machine
):
    settings.DOMAINS_READD_COOLDOWN = 3600
    domain_add(project=shop, hostname="www.example.test", actor=alice)
    alice_client.post(SHOP + "www.example.test/remove/", {"remove": "1"})
    assert not Domain.objects.filter(project=shop).exists()
    refused = _add(alice_client, SHOP, "www.example.test")
    assert refused.redirect_chain == []
    assert (
        "www.example.test was removed from this project a moment ago; "
        "it can be added again in 60 minutes" in refused.content.decode()
    )
    assert DomainEvent.objects.filter(project=shop, action="added").count() == 1
    # Another project may claim the name at once (it still needs to prove control).
    assert _add(bob_client, BOBS, "www.example.test").redirect_chain
    time_machine.move_to(timezone.now() + timedelta(hours=1, seconds=1))
    assert _add(alice_client, SHOP, "www.example.test").redirect_chain
