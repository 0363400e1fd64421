"""A DNS server that answers slowly, truncates, fails or talks garbage: verification
and certificate issuance report a temporary failure and retry; nothing crashes;
a truncated answer is fetched again over TCP."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from celery.exceptions import Retry
from django.conf import settings as django_settings

from domains.choices import TEMPORARY_CHECK_CODES, CheckCode, State
from domains.models import Domain
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check, domain_check_many
from domains.tasks import check_domain, check_domains, issue_certificate
from tests.fixtures.domains import TARGET, check
from tests.reliability.hostile_dns import SPOOFED

pytestmark = pytest.mark.django_db

HOSTILE = ["slow", "servfail", "garbage", "garbage_same_id", "truncate_garbage"]


@pytest.fixture
def www(www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")  # the owner did it right
    return www


@pytest.fixture
def batch(shop, alice, dns_server, www):
    """www and a second domain set up right: the ids of a sweep batch of two."""
    dns_server.add("shop.example.test", "CNAME", TARGET + ".")
    second = domain_add(project=shop, hostname="shop.example.test", actor=alice)
    return [www.pk, second.pk]


def beyond_the_lifetime() -> float:
    """A slow answer's delay: past the resolver's whole lifetime, whatever the tests set."""
    return django_settings.DOMAINS_DNS_LIFETIME + 0.3


@pytest.mark.parametrize("mode", HOSTILE)
def test_a_hostile_server_is_a_temporary_failure_checked_again_by_the_sweep(hostile_dns, www, mode):
    hostile_dns.mode, hostile_dns.delay = mode, beyond_the_lifetime()
    domain = check(www)
    assert domain.check_code in TEMPORARY_CHECK_CODES, domain.check_code
    assert domain.check_message
    stored = Domain.objects.get(pk=www.pk)
    assert stored.state == State.PENDING  # not failed, not verified
    assert stored.next_check_at is not None  # the sweep will check again
    # A Verify's check is not retried by Celery (called directly, a retry raises Retry).
    check_domain(www.pk)
    assert hostile_dns.queries


def test_a_verify_check_of_a_server_that_never_answers_ends_at_its_deadline(
    hostile_dns, www, settings
):
    hostile_dns.mode = "hold"
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 1.0
    started = time.monotonic()
    check_domain(www.pk)  # no Retry raised
    assert time.monotonic() - started < 1.0 + 0.5
    assert hostile_dns.held.is_set()
    stored = Domain.objects.get(pk=www.pk)
    assert stored.check_code == CheckCode.DNS_TIMEOUT
    assert stored.state == State.PENDING and stored.next_check_at is not None


@pytest.mark.parametrize("mode", HOSTILE)
def test_a_batch_under_a_hostile_server_fails_for_now_and_retries_every_domain(
    hostile_dns, batch, mode
):
    hostile_dns.mode, hostile_dns.delay = mode, beyond_the_lifetime()

    domains = domain_check_many(domain_ids=batch).domains

    assert {domain.check_code in TEMPORARY_CHECK_CODES for domain in domains} == {True}
    assert set(Domain.objects.values_list("state", flat=True)) == {State.PENDING}
    with pytest.raises(Retry):
        check_domains(batch)


def test_a_batch_asks_truncated_answers_again_over_tcp_and_verifies(hostile_dns, batch):
    hostile_dns.mode = "truncate"
    domains = domain_check_many(domain_ids=batch).domains
    assert [domain.check_code for domain in domains] == [CheckCode.OK, CheckCode.OK]
    assert {transport for transport, _ in hostile_dns.queries} == {"udp", "tcp"}


def test_a_truncated_answer_is_asked_again_over_tcp_and_verifies(hostile_dns, www):
    hostile_dns.mode = "truncate"
    domain = check(www)
    assert domain.check_code == CheckCode.OK
    assert {transport for transport, _ in hostile_dns.queries} == {"udp", "tcp"}


def test_a_forged_answer_from_another_port_is_ignored(hostile_dns, www):
    hostile_dns.mode = "spoof"  # a forged CNAME arrives first, from another port
    domain = check(www)
    assert domain.check_code == CheckCode.OK
    assert SPOOFED.rstrip(".") not in domain.check_found


def test_a_slow_answer_within_the_lifetime_is_just_slow(hostile_dns, www, platform_settings):
    hostile_dns.mode, hostile_dns.delay = "slow", 0.1
    platform_settings.DOMAINS_DNS_TIMEOUT = platform_settings.DOMAINS_DNS_LIFETIME = 3.0
    assert check(www).check_code == CheckCode.OK


def test_after_the_storm_the_next_check_verifies(hostile_dns, www):
    hostile_dns.mode = "garbage_same_id"
    assert check(www).check_code in TEMPORARY_CHECK_CODES
    hostile_dns.mode = "forward"
    assert check(www).check_code == CheckCode.OK
    assert Domain.objects.get(pk=www.pk).state in (State.VERIFIED, State.ISSUING)


@pytest.mark.parametrize("mode", HOSTILE)
def test_issuance_waits_when_caa_cannot_be_read(hostile_dns, www, mode):
    """RFC 8659: an unreadable CAA is never permission; the issue task retries."""
    domain_check(domain_id=www.pk)  # forward mode: verified, issuing
    assert Domain.objects.get(pk=www.pk).state == State.ISSUING
    hostile_dns.mode, hostile_dns.delay = mode, beyond_the_lifetime()
    with pytest.raises(certificates.TemporaryDNSError):
        certificates.certificate_issue(domain_id=www.pk)
    # Called directly, Celery's retry() re-raises the error it was given to retry on.
    with pytest.raises(certificates.TemporaryDNSError):
        issue_certificate(www.pk)
    stored = Domain.objects.get(pk=www.pk)
    assert stored.state == State.ISSUING and stored.certificates.count() == 0


@pytest.mark.parametrize("mode", ["servfail", "hold"])
def test_a_live_domain_whose_name_server_never_answers_again_stops_serving(
    hostile_dns, www, time_machine, mode
):
    """A lame delegation: the name server answers SERVFAIL, or nothing, for ever."""
    start = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
    time_machine.move_to(start, tick=True)  # dnspython measures its lifetime on the clock
    assert check(www).is_live
    hostile_dns.mode = mode

    def check_at(hours: float) -> Domain:
        time_machine.move_to(start + timedelta(hours=hours), tick=True)
        return check(www)

    assert check_at(1).check_code in TEMPORARY_CHECK_CODES
    assert check_at(72).failing_since is None  # 71 hours of failures: not yet
    grace = check_at(73.5)
    assert grace.failing_since is not None and grace.is_live  # the grace period runs
    assert check_at(73.5 + 47).state == State.ISSUING
    assert check_at(73.5 + 48.1).state == State.MISCONFIGURED
