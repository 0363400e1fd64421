"""Propagation: re-checks with backoff for up to 48 hours, then failed; Verify resets it all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from domains.choices import State
from domains.models import Domain, DomainEvent
from domains.policy import backoff_delay
from domains.services.custom_domains import domain_request_check
from tests.fixtures.domains import TARGET, check, in_step

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock():
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


@pytest.fixture
def www(clock, dns_server, www):
    """shop's www, added at T0, in a zone that exists."""
    dns_server.add("example.test", "TXT", '"zone"')
    return www


def test_backoff_schedule_is_frequent_first_then_hourly():
    minutes = [backoff_delay(n).total_seconds() / 60 for n in range(1, 10)]
    assert minutes == [1, 2, 5, 10, 15, 30, 60, 60, 60]


def test_first_automatic_check_is_a_minute_after_adding(www):
    assert www.next_check_at == T0 + timedelta(minutes=1)
    assert www.window_started_at == T0


def test_each_failed_check_schedules_the_next_one_further_out(clock, www):
    now = T0
    for expected_minutes in [1, 2, 5, 10, 15, 30, 60, 60]:
        domain = check(www)
        assert domain.next_check_at == now + timedelta(minutes=expected_minutes)
        now = domain.next_check_at
        clock.move_to(now)


def test_the_last_check_lands_on_the_end_of_the_window(clock, www):
    Domain.objects.filter(pk=www.pk).update(check_attempts=20)
    clock.move_to(T0 + timedelta(hours=47, minutes=30))
    domain = check(www)
    assert domain.next_check_at == T0 + timedelta(hours=48)
    assert domain.state == State.PENDING


def test_after_48_hours_the_domain_fails_with_the_reason(clock, www):
    clock.move_to(T0 + timedelta(hours=48))
    domain = check(www)
    assert domain.state == State.FAILED
    assert domain.check_code == "nxdomain"
    assert domain.check_message.startswith("Verification did not succeed within 48 hours:")
    assert domain.next_check_at is None
    assert DomainEvent.objects.filter(domain=domain, action="failed").exists()


def test_the_window_is_a_setting(clock, www, settings):
    settings.DOMAINS_VERIFY_WINDOW = 2
    clock.move_to(T0 + timedelta(hours=2))
    assert check(www).state == State.FAILED


def test_a_temporary_failure_never_fails_the_domain(clock, www, dns_server):
    dns_server.servfail("www.example.test")
    clock.move_to(T0 + timedelta(hours=49))
    domain = check(www)
    assert domain.state == State.PENDING
    assert domain.check_code == "dns_servfail"
    assert domain.next_check_at is not None and domain.next_check_at > T0 + timedelta(hours=49)


def test_reverify_on_a_failed_domain_restarts_the_window_and_checks_at_once(clock, www, alice):
    clock.move_to(T0 + timedelta(hours=48))
    check(www)
    later = T0 + timedelta(hours=50)
    clock.move_to(later)
    domain = domain_request_check(domain=Domain.objects.get(pk=www.pk), actor=alice)
    domain.refresh_from_db()
    assert domain.state == State.PENDING
    assert domain.check_attempts == 0
    assert domain.window_started_at == later
    assert domain.next_check_at == later
    assert DomainEvent.objects.filter(domain=domain, action="verify_requested").exists()


def test_verify_resets_the_backoff_of_a_pending_domain(
    clock, www, alice, django_capture_on_commit_callbacks
):
    for _ in range(5):
        check(www)
    www.refresh_from_db()
    assert www.check_attempts == 5
    with django_capture_on_commit_callbacks(execute=False):
        domain_request_check(domain=www, actor=alice)
    www.refresh_from_db()
    assert www.check_attempts == 0
    assert www.next_check_at == T0
    assert check(www).next_check_at == T0 + timedelta(minutes=1)


def test_a_verified_domain_is_rechecked_on_a_schedule(clock, www, dns_server, settings):
    settings.DOMAINS_RECHECK_INTERVAL = 6
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.next_check_at == T0 + timedelta(hours=6)


def test_a_live_domain_that_stops_verifying_says_so_and_keeps_serving(clock, www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    check(www)
    Domain.objects.filter(pk=www.pk).update(**in_step(State.ACTIVE))
    dns_server.remove("www.example.test")
    clock.move_to(T0 + timedelta(hours=6))
    domain = check(www)
    assert domain.state == State.ACTIVE
    assert domain.check_code == "nxdomain"
    assert domain.failing_since == T0 + timedelta(hours=6)
    assert domain.next_check_at == T0 + timedelta(hours=6, minutes=1)
    [event] = DomainEvent.objects.filter(domain=domain, action="stopped_verifying")
    assert "still served until" in event.message
    # Still broken when the grace period ends: no longer served.
    clock.move_to(T0 + timedelta(hours=54))
    assert check(domain).state == State.MISCONFIGURED


def test_troubleshooting_is_needed_30_minutes_after_verification_without_certificate(
    clock, www, dns_server
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    check(www)
    clock.move_to(T0 + timedelta(minutes=29))
    www.refresh_from_db()
    assert www.needs_troubleshooting is False
    clock.move_to(T0 + timedelta(minutes=30))
    assert www.needs_troubleshooting is True
