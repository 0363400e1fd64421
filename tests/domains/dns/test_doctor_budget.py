"""The domain doctor on a budget no tenant's zone can stretch: at most DOCTOR_NAMESERVERS name
servers and DOCTOR_ADDRESSES_PER_NAMESERVER addresses of each, asked over UDP only, within the
check's one clock; a zone asked once for all of its names in a sweep batch."""

from __future__ import annotations

import time

import pytest

from domains.choices import CheckCode, FindingCode
from domains.dns import doctor
from domains.models import Domain
from domains.policy import DOCTOR_ADDRESSES_PER_NAMESERVER, DOCTOR_IN_FLIGHT, DOCTOR_NAMESERVERS
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check_many
from domains.tasks import check_domain
from tests.domains.dns.doctorrows import WWW, answers, findings
from tests.fixtures.domains import TARGET, check, go_live
from tests.fixtures.nameservers import ADDRESSES, CHALLENGE, NS1, NS2, WILDCARD, ZONE

pytestmark = pytest.mark.django_db


def test_a_zone_of_hundreds_of_silent_addresses_is_asked_a_few_within_the_deadline(
    zone, www, silent_everywhere, settings
):
    """Ten name servers of twenty silent addresses each (as many as one answer over UDP
    holds): the doctor asks the first five names for their addresses, two addresses of each,
    once, and the Verify check ends with its deadline; the finding says what was left out."""
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 1.0
    servers = zone.of_silent_addresses(names=10, each=20)
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    started = time.monotonic()
    check_domain(www.pk)
    took = time.monotonic() - started

    asked = DOCTOR_NAMESERVERS * DOCTOR_ADDRESSES_PER_NAMESERVER
    assert list(silent_everywhere.queries) == [(WWW, "A")] * asked
    looked_up = {name for name, rdtype in zone.resolver.queries if name.startswith("ns-")}
    assert looked_up == set(servers[:DOCTOR_NAMESERVERS])
    # The bound is the count above; this only says the deadline, not the 10 s lifetime, ended it.
    assert took < settings.DOMAINS_DNS_LIFETIME, took
    domain = Domain.objects.get(pk=www.pk)
    assert domain.check_code == CheckCode.OK
    assert [(s[0], s[2]) for s in answers(domain)] == [
        (name, "no answer") for name in servers[:DOCTOR_NAMESERVERS] for _ in range(2)
    ]
    assert list(findings(domain)) == [
        FindingCode.NAMESERVER_UNREACHABLE,
        FindingCode.NAMESERVERS_UNASKED,
    ]
    unasked = findings(domain)[FindingCode.NAMESERVERS_UNASKED]
    assert unasked["nameservers"] == servers[DOCTOR_NAMESERVERS:]
    assert (
        f"{ZONE} lists 10 name servers; we ask the first 5 in alphabetical order, so "
        in (unasked["message"])
    )
    assert f"{servers[0]} has 20 addresses; we ask 2, so 18 were not asked." in (unasked["message"])


def test_name_servers_whose_addresses_do_not_fit_one_datagram_are_not_asked(
    zone, www, silent_everywhere
):
    """Name servers of four hundred addresses each: one answer over UDP cannot hold them, so
    the doctor asks the resolver for each of the first five once, never again over TCP, and
    asks none of their addresses; the finding says so."""
    servers = zone.of_silent_addresses(names=DOCTOR_NAMESERVERS, each=400)
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    check_domain(www.pk)

    assert list(silent_everywhere.queries) == []
    looked_up = [query for query in zone.resolver.queries if query[0].startswith("ns-")]
    # Once each: a retry over TCP after the truncated answer would be a second A question.
    assert sorted(looked_up) == sorted(
        (name, rdtype) for name in servers[:DOCTOR_NAMESERVERS] for rdtype in ("A", "AAAA")
    )
    domain = Domain.objects.get(pk=www.pk)
    assert domain.check_code == CheckCode.OK
    assert [(s[0], s[2]) for s in answers(domain)] == [
        (name, doctor.OVERSIZED) for name in servers[:DOCTOR_NAMESERVERS]
    ]
    unasked = findings(domain)[FindingCode.NAMESERVERS_UNASKED]
    assert unasked["nameservers"] == servers[:DOCTOR_NAMESERVERS]
    assert "hold more records than one DNS answer over UDP" in unasked["message"]


def test_a_zone_whose_ns_set_does_not_fit_one_datagram_has_no_server_asked(
    zone, www, silent_everywhere
):
    names = [f"ns-{n:03}.{ZONE}" for n in range(100)]
    zone.resolver.remove(ZONE, "NS")
    zone.resolver.add(ZONE, "NS", *(f"{name}." for name in names))
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    check_domain(www.pk)

    assert list(silent_everywhere.queries) == []
    assert [q for q in zone.resolver.queries if q[0].startswith("ns-")] == []
    assert zone.resolver.queries.count((ZONE, "NS")) == 1
    domain = Domain.objects.get(pk=www.pk)
    assert answers(domain) == []
    assert findings(domain)[FindingCode.NAMESERVERS_UNASKED]["nameservers"] == [ZONE]


def test_an_apex_with_a_txt_proof_asks_no_more_than_its_turns_of_silent_servers(
    zone, shop, alice, bobs, bob, silent_everywhere, settings
):
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 1.0
    zone.of_silent_addresses(names=20, each=20)
    domain_add(project=shop, hostname=ZONE, actor=alice)
    rival = domain_add(project=bobs, hostname=ZONE, actor=bob)
    check_domain(rival.pk)

    # A, AAAA and the TXT proof of each address asked, DOCTOR_IN_FLIGHT at once: the first
    # ones are held to the deadline, so the rest are never sent.
    assert len(silent_everywhere.queries) == DOCTOR_IN_FLIGHT
    assert set(silent_everywhere.queries) == {
        (ZONE, "A"),
        (ZONE, "AAAA"),
        (f"_petstore-verification.{ZONE}", "TXT"),
    }
    late = findings(Domain.objects.get(pk=rival.pk))[FindingCode.NAMESERVERS_UNASKED]
    assert "could not be asked before the check's deadline" in late["message"]


def test_a_wildcards_challenge_question_takes_turns_with_its_other_questions(
    zone, shop, alice, silent_everywhere, settings
):
    """A wildcard asks each address one question more (its `_acme-challenge` CNAME), within
    the same DOCTOR_IN_FLIGHT turns: the first ones are held to the deadline, so the rest
    are never sent."""
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 1.0
    zone.of_silent_addresses(names=20, each=20)
    wildcard = domain_add(project=shop, hostname=WILDCARD, actor=alice)
    zone.resolver.add(WILDCARD, "CNAME", TARGET + ".")
    zone.resolver.add(CHALLENGE, "CNAME", wildcard.acme_challenge_target)
    check_domain(wildcard.pk)

    assert len(silent_everywhere.queries) == DOCTOR_IN_FLIGHT
    assert set(silent_everywhere.queries) == {(WILDCARD, "A"), (CHALLENGE, "CNAME")}
    checked = Domain.objects.get(pk=wildcard.pk)
    assert checked.check_code == CheckCode.OK
    assert FindingCode.NAMESERVERS_UNASKED in findings(checked)


def test_a_zone_is_asked_once_for_all_of_its_names_in_a_sweep_batch(zone, shop, alice):
    """A sweep batch of three names of one zone: two not live yet (their servers asked with
    the check) and a live one whose check fails (asked after it, in a second round). The
    zone's NS and its servers' addresses are asked of the resolver once for the batch; each
    server is asked directly about each name."""
    names = [f"{label}.{ZONE}" for label in ("a", "b", "c")]
    domains = [domain_add(project=shop, hostname=name, actor=alice) for name in names]
    go_live(domains[2])
    zone.resolver.queries.clear()
    domain_check_many(domain_ids=[domain.pk for domain in domains])

    asked = list(zone.resolver.queries)
    assert asked.count((ZONE, "NS")) == 1
    for server in (NS1, NS2):
        assert asked.count((server, "A")) == asked.count((server, "AAAA")) == 1
        assert sorted(zone.server(server).queries) == [(name, "A") for name in names]
    for domain in domains:
        checked = Domain.objects.get(pk=domain.pk)
        assert [s[0] for s in answers(checked)] == [NS1, NS2]


def test_a_name_server_with_both_families_is_asked_at_one_address_of_each(zone, www):
    zone.resolver.add(NS1, "A", "127.0.0.5", "127.0.0.6")
    zone.resolver.add(NS1, "AAAA", "::1")
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    domain = check(www)
    assert [(s[0], s[1]) for s in answers(domain)] == [
        (NS1, ADDRESSES[NS1]),
        (NS1, "::1"),
        (NS2, ADDRESSES[NS2]),
    ]
    unasked = findings(domain)[FindingCode.NAMESERVERS_UNASKED]
    assert unasked["nameservers"] == [NS1]
    assert f"{NS1} has 4 addresses; we ask 2, so 2 were not asked." in unasked["message"]


@pytest.mark.django_db(transaction=True)
def test_a_sweep_batch_with_zones_of_silent_addresses_ends_within_its_lifetime(
    zone, shop, alice, bobs, bob, silent_everywhere, settings
):
    """The sweep's batch (domain_check_many, no deadline of its own: DOMAINS_DNS_LIFETIME):
    three names of a zone of two hundred silent addresses ask ten each, the batch ends with
    its lifetime, and another tenant's domain in it verifies."""
    settings.DOMAINS_DNS_TIMEOUT = 10.0
    settings.DOMAINS_DNS_LIFETIME = 1.0
    zone.of_silent_addresses(names=10, each=20)
    silent = [
        domain_add(project=shop, hostname=f"{name}.{ZONE}", actor=alice).pk
        for name in ("a", "b", "c")
    ]
    other = domain_add(project=bobs, hostname="shop.other.test", actor=bob)
    zone.resolver.add("shop.other.test", "CNAME", TARGET + ".")
    started = time.monotonic()
    domain_check_many(domain_ids=[*silent, other.pk])
    took = time.monotonic() - started

    assert len(silent_everywhere.queries) == 3 * DOCTOR_IN_FLIGHT
    # The bound is the count above; this only says the lifetime, not a server's 10 s, ended it.
    assert took < settings.DOMAINS_DNS_TIMEOUT, took
    assert Domain.objects.get(pk=other.pk).check_code == CheckCode.OK
    for pk in silent:
        assert FindingCode.NAMESERVERS_UNASKED in findings(Domain.objects.get(pk=pk))
