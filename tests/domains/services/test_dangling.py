"""A domain whose DNS leaves stops serving after its grace period, however often Verify is
pressed, and its certificate is not renewed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from domains.choices import State
from domains.models import Certificate, Domain, DomainEvent
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_request_check
from domains.services.verification import domain_check
from tests.fixtures.domains import T0, TARGET, check, go_live

pytestmark = pytest.mark.django_db


def test_reverify_every_40_hours_does_not_keep_a_dangling_domain_alive(
    client, dns_server, active, alice, time_machine
):
    dns_server.remove("www.example.test")  # the owner left; the CNAME is gone
    for hours in (1, 41, 81):
        time_machine.move_to(T0 + timedelta(hours=hours), tick=False)
        domain = Domain.objects.get(pk=active.pk)
        domain_request_check(domain=domain, actor=alice, cooldown=False)
        domain = check(domain)
        if hours < 49:
            assert domain.state == State.ACTIVE  # within the grace period: still served
            assert domain.failing_since == T0 + timedelta(hours=1)  # Verify did not reset it
            assert client.get("/", HTTP_HOST="www.example.test", secure=True).status_code == 200
    assert domain.state == State.MISCONFIGURED
    assert client.get("/", HTTP_HOST="www.example.test", secure=True).status_code == 404
    [stopped] = DomainEvent.objects.filter(domain=domain, action="stopped_serving")
    assert "was not fixed within 48 hours" in stopped.message


def test_the_sweep_stops_it_on_time_without_anybody_pressing_anything(
    dns_server, active, time_machine
):
    dns_server.remove("www.example.test")
    time_machine.move_to(T0 + timedelta(hours=6), tick=False)  # the scheduled re-check
    domain = check(active)
    assert domain.state == State.ACTIVE
    # The last check of the grace period lands on its end.
    assert domain.next_check_at is not None and domain.next_check_at <= T0 + timedelta(hours=54)
    time_machine.move_to(T0 + timedelta(hours=54), tick=False)
    assert check(active).state == State.MISCONFIGURED


def test_a_passing_check_within_the_grace_period_clears_it(dns_server, active, time_machine):
    dns_server.remove("www.example.test")
    time_machine.move_to(T0 + timedelta(hours=6), tick=False)
    assert check(active).failing_since is not None
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    time_machine.move_to(T0 + timedelta(hours=7), tick=False)
    domain = check(active)
    assert domain.failing_since is None and domain.state == State.ACTIVE


def test_a_temporary_dns_failure_starts_no_grace_period(dns_server, active, time_machine):
    dns_server.blackhole("www.example.test")
    # The clock runs: dnspython measures its lifetime on it.
    time_machine.move_to(T0 + timedelta(hours=6), tick=True)
    domain = check(active)
    assert domain.check_code == "dns_timeout"
    assert domain.failing_since is None and domain.state == State.ACTIVE


def test_a_stopped_domain_is_not_renewed(dns_server, active, time_machine):
    dns_server.remove("www.example.test")
    time_machine.move_to(T0 + timedelta(hours=1), tick=False)
    domain_check(domain_id=active.pk)
    time_machine.move_to(T0 + timedelta(hours=50), tick=False)
    domain_check(domain_id=active.pk)
    first = Certificate.objects.get(domain=active)
    time_machine.move_to(first.not_after - timedelta(days=1), tick=False)
    assert certificates.certificates_due_for_renewal() == []
    assert certificates.certificate_renew(domain_id=active.pk) is None
    assert Certificate.objects.filter(domain=active).count() == 1


def test_dns_that_fails_for_good_starts_the_grace_period_after_the_limit(
    client, dns_server, active, time_machine, settings
):
    assert settings.DOMAINS_TEMPORARY_FAILURE_LIMIT == 72
    dns_server.servfail("www.example.test")  # a lame delegation: SERVFAIL, for ever
    first = T0 + timedelta(hours=1)
    for hours in (1, 24, 72):  # the limit runs from the first temporary failure
        time_machine.move_to(T0 + timedelta(hours=hours), tick=False)
        domain = check(active)
        assert domain.check_code == "dns_servfail"
        assert domain.failing_since is None and domain.state == State.ACTIVE
        assert domain.stops_serving_at() is None
    # The check that ends the limit is scheduled on it.
    assert domain.next_check_at is not None
    assert domain.next_check_at <= first + timedelta(hours=72)
    assert not DomainEvent.objects.filter(domain=domain, action="stopped_verifying").exists()

    time_machine.move_to(first + timedelta(hours=72), tick=False)
    domain = check(active)
    assert domain.failing_since == first + timedelta(hours=72)  # the grace period starts
    assert domain.stops_serving_at() == first + timedelta(hours=120)
    assert domain.state == State.ACTIVE
    assert "failed to answer for www.example.test since" in domain.check_message
    [started] = DomainEvent.objects.filter(domain=domain, action="stopped_verifying")
    assert "more than 72 hours" in started.message
    assert client.get("/", HTTP_HOST="www.example.test", secure=True).status_code == 200

    time_machine.move_to(first + timedelta(hours=119), tick=False)
    assert check(active).state == State.ACTIVE
    time_machine.move_to(first + timedelta(hours=120), tick=False)
    domain = check(active)
    assert domain.state == State.MISCONFIGURED
    assert client.get("/", HTTP_HOST="www.example.test", secure=True).status_code == 404
    [stopped] = DomainEvent.objects.filter(domain=domain, action="stopped_serving")
    assert "its DNS stopped answering" in stopped.message


def test_an_answer_between_temporary_failures_restarts_the_limit(dns_server, active, time_machine):
    dns_server.servfail("www.example.test")
    time_machine.move_to(T0 + timedelta(hours=1), tick=False)
    domain_check(domain_id=active.pk)
    dns_server.records.servfailing.clear()  # the DNS answers again, rightly
    time_machine.move_to(T0 + timedelta(hours=40), tick=False)
    assert check(active).failing_temporarily_since is None
    dns_server.servfail("www.example.test")
    time_machine.move_to(T0 + timedelta(hours=80), tick=False)
    domain = check(active)
    assert domain.failing_since is None  # 40 hours of failures in a row, not 79
    assert domain.failing_temporarily_since == T0 + timedelta(hours=80)


def test_the_limit_is_a_setting(dns_server, active, time_machine, settings):
    settings.DOMAINS_TEMPORARY_FAILURE_LIMIT = 1
    dns_server.servfail("www.example.test")
    time_machine.move_to(T0 + timedelta(hours=1), tick=False)
    assert check(active).failing_since is None
    time_machine.move_to(T0 + timedelta(hours=2), tick=False)
    assert check(active).failing_since == T0 + timedelta(hours=2)


def test_a_live_domain_whose_record_left_is_told_it_is_gone_not_that_it_is_new(
    dns_server, active, time_machine
):
    dns_server.remove("www.example.test")  # NXDOMAIN now
    time_machine.move_to(T0 + timedelta(hours=1), tick=False)
    domain = check(active)
    assert domain.check_code == "nxdomain"
    assert domain.check_message.startswith(
        f"www.example.test no longer has its CNAME record pointing to {TARGET}: the name no "
        "longer exists in DNS (NXDOMAIN). It was there when the domain went live"
    )
    assert "yet" not in domain.check_message and "48 hours" not in domain.check_message
    [failing] = DomainEvent.objects.filter(domain=domain, action="stopped_verifying")
    assert failing.message.startswith(domain.check_message)

    dns_server.add("www.example.test", "TXT", '"other records stay"')  # no CNAME: no_record
    time_machine.move_to(T0 + timedelta(hours=50), tick=False)
    domain = check(active)
    assert (domain.state, domain.check_code) == (State.MISCONFIGURED, "no_record")
    assert f"no longer has its CNAME record pointing to {TARGET}. It was" in domain.check_message
    assert "yet" not in domain.check_message
    # Stopped, it is still a domain that was live, not a new one.
    domain = check(domain)
    assert domain.check_message.startswith("www.example.test no longer has its CNAME record")


def test_a_new_domain_without_its_record_is_still_told_to_create_it(dns_server, www):
    dns_server.add("example.test", "TXT", '"zone exists"')
    domain = check(www)
    assert domain.check_code == "nxdomain"
    assert "does not exist in DNS yet" in domain.check_message


def test_a_live_apex_whose_alias_left_is_told_its_alias_is_gone(dns_server, shop, alice):
    apex = go_live(domain_add(project=shop, hostname="example.test", actor=alice))
    dns_server.add("example.test", "MX", "10 mail.example.test.")  # the A/AAAA left
    domain = check(apex)
    assert domain.check_code == "no_record"
    assert domain.check_message.startswith(
        f"example.test no longer has its ALIAS or ANAME record pointing to {TARGET}. It was "
        "there when the domain went live"
    )
