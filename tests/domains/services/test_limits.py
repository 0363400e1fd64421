"""What keeps one project from holding names for long or many, and Verify from hammering
the DNS: claims expire, plans have quotas, Verify has a cooldown."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.utils import timezone

from domains import tasks
from domains.choices import Plan
from domains.models import Domain, DomainEvent
from domains.policy import PLAN_DOMAIN_QUOTA
from domains.services import scheduling
from domains.services.custom_domains import domain_add, domain_remove, domain_request_check
from domains.services.projects import project_create
from petstore.celery import app
from tests.fixtures.domains import go_live, run_at_once

pytestmark = pytest.mark.django_db


def test_a_claim_that_never_verified_expires_after_seven_days(shop, alice, time_machine):
    stale = domain_add(project=shop, hostname="stale.example.test", actor=alice)
    proven = go_live(domain_add(project=shop, hostname="www.example.test", actor=alice))
    time_machine.move_to(timezone.now() + timedelta(days=6, hours=23))
    scheduling.sweep()
    assert Domain.objects.filter(pk=stale.pk).exists()
    time_machine.move_to(timezone.now() + timedelta(hours=2))
    scheduling.sweep()
    assert not Domain.objects.filter(pk=stale.pk).exists()
    assert Domain.objects.filter(pk=proven.pk).exists()
    [expired] = DomainEvent.objects.filter(action="expired")
    assert (
        expired.hostname == "stale.example.test" and "never verified in 7 days" in expired.message
    )


def test_a_plan_carries_a_domain_quota(shop, alice):
    quota = PLAN_DOMAIN_QUOTA[Plan.PRO]
    for i in range(quota):
        domain_add(project=shop, hostname=f"d{i}.example.test", actor=alice)
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname="one-more.example.test", actor=alice)
    assert refused.value.code == "quota_reached"
    assert f"This project has {quota} custom domains" in refused.value.messages[0]
    with pytest.raises(Exception, match="the most the Pro plan allows"):
        call_command("adddomain", "shop", "one-more.example.test")


def test_verify_never_queues_a_second_check_and_has_a_cooldown(
    www, alice, django_capture_on_commit_callbacks, time_machine, settings
):
    settings.DOMAINS_VERIFY_COOLDOWN = 30
    with django_capture_on_commit_callbacks(execute=False) as queued:
        tasks.request_check(domain=www, actor=alice)
    assert len(queued) == 1
    with pytest.raises(ValidationError) as refused:
        tasks.request_check(domain=Domain.objects.get(pk=www.pk), actor=alice)
    assert refused.value.code == "check_in_progress"
    # The check has run (recorded) a moment later: still too soon for another.
    Domain.objects.filter(pk=www.pk).update(checked_at=timezone.now() + timedelta(seconds=1))
    time_machine.move_to(timezone.now() + timedelta(seconds=5))
    with pytest.raises(ValidationError) as refused:
        domain_request_check(domain=Domain.objects.get(pk=www.pk), actor=alice)
    assert refused.value.code == "cooldown"
    time_machine.move_to(timezone.now() + timedelta(seconds=30))
    domain_request_check(domain=Domain.objects.get(pk=www.pk), actor=alice)


def test_reserved_slugs_never_name_a_project(alice):
    for slug in ("www", "api", "admin", "dashboard", "domains", "mail"):
        with pytest.raises(ValidationError):
            project_create(slug=slug, owner=alice, plan="pro")


def test_a_readd_cooldown_of_zero_is_off(shop, alice, settings):
    """Development's value (make run's settings file), so the walk-through's Add, Remove and
    Add again work at once, even within the same clock tick."""
    settings.DOMAINS_READD_COOLDOWN = 0
    with time_machine.travel(timezone.now(), tick=False):
        for _ in range(3):
            domain = domain_add(project=shop, hostname="shop.example.test", actor=alice)
            domain_remove(domain=domain, actor=alice)
    assert DomainEvent.objects.filter(project=shop, action="added").count() == 3


def test_staff_commands_are_not_limited_per_hour_nor_by_the_readd_cooldown(
    shop, alice, settings, dns_server
):
    """adddomain and verifydomain are staff's: they act for a project past its limits."""
    settings.DOMAINS_ADD_PER_HOUR = settings.DOMAINS_VERIFY_PER_HOUR = 1
    www = domain_add(project=shop, hostname="www.example.test", actor=alice)
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname="shop.example.test", actor=alice)
    assert refused.value.code == "add_limit"
    call_command("adddomain", "shop", "shop.example.test", stdout=StringIO())
    domain_remove(domain=Domain.objects.get(hostname="shop.example.test"), actor=alice)
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname="shop.example.test", actor=alice, limited=True)
    assert refused.value.code == "readd_cooldown"
    call_command("adddomain", "shop", "shop.example.test", stdout=StringIO())

    domain_request_check(domain=www, actor=alice)
    second = Domain.objects.get(hostname="shop.example.test")
    with pytest.raises(ValidationError) as refused:
        domain_request_check(domain=second, actor=alice)
    assert refused.value.code == "verify_limit"
    # Checked (and found without its record), not refused.
    with pytest.raises(CommandError, match="does not verify"):
        call_command("verifydomain", "shop.example.test", stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_presses_of_verify_that_arrive_together_pass_the_cooldown_once(www, alice, settings):
    """Each press read the domain before its transaction (as a view does); the cooldown is
    read again and set with the row locked, so one press of the window passes."""
    settings.DOMAINS_VERIFY_COOLDOWN = 30
    presses = [Domain.objects.get(pk=www.pk) for _ in range(8)]
    claimed = iter(presses)

    passed, refused = run_at_once(
        lambda: tasks.request_check(domain=next(claimed), actor=alice), len(presses)
    )
    app.control.purge()  # the one check queued; no worker here to take it

    assert len(passed) == 1
    assert len(refused) == 7
    assert all(isinstance(error, ValidationError) for error in refused)
    assert {getattr(error, "code", None) for error in refused} <= {"check_in_progress", "cooldown"}
    assert DomainEvent.objects.filter(domain=www, action="verify_requested").count() == 1
