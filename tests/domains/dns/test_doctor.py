"""The domain doctor against real name servers on loopback: each finding comes from a real
disagreement between the zone's own servers (tests/fixtures/nameservers.py), and a zone
whose servers agree has none."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from domains.choices import CheckCode, FindingCode, State
from domains.dns import doctor, lookups
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check_many
from domains.tasks import check_domain
from tests.domains.dns.doctorrows import OLD, WWW, answers, diagnosis, findings
from tests.fixtures.domains import TARGET, TARGET_ADDRESS, TARGET_ADDRESS6, check, go_live
from tests.fixtures.nameservers import NS1, NS2, NS3, ZONE
from tests.processes import wait_for

pytestmark = pytest.mark.django_db


def test_servers_that_agree_have_no_finding(zone, www):
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == CheckCode.OK
    assert diagnosis(domain)["findings"] == []
    assert answers(domain) == [
        (NS1, "127.0.0.2", f"CNAME {TARGET}.", True),
        (NS2, "127.0.0.3", f"CNAME {TARGET}.", True),
    ]
    assert {server["ttl"] for server in diagnosis(domain)["nameservers"]} == {300}
    asked_at = datetime.fromisoformat(diagnosis(domain)["checked_at"])
    assert domain.checked_at is not None
    assert timedelta(0) <= domain.checked_at - asked_at < timedelta(seconds=5)


def test_a_server_with_the_old_record_is_named(zone, www):
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".", on=(NS1,))
    zone.serve(WWW, "CNAME", OLD + ".", on=(NS2,))
    domain = check(www)
    assert answers(domain) == [
        (NS1, "127.0.0.2", f"CNAME {TARGET}.", True),
        (NS2, "127.0.0.3", f"CNAME {OLD}.", False),
    ]
    disagree = findings(domain)[FindingCode.NAMESERVERS_DISAGREE]
    assert disagree["nameservers"] == [NS2]
    assert disagree["records"] == [f"CNAME {OLD}."]
    assert f"{NS1} gives the right record (CNAME {TARGET}.)" in disagree["message"]
    assert f"{NS2} still gives another answer (CNAME {OLD}.)" in disagree["message"]
    assert list(findings(domain)) == [FindingCode.NAMESERVERS_DISAGREE]


def test_no_server_with_the_right_record_is_a_finding_of_its_own(zone, www):
    """With the only server giving no record, the doctor says so, above the row's ✗, and
    never that every server gives what the platform needs."""
    zone.resolver.add(WWW, "CNAME", OLD + ".")
    zone.serve(WWW, "CNAME", OLD + ".", on=(NS1, NS2))
    domain = check(www)
    assert [server[3] for server in answers(domain)] == [False, False]
    assert list(findings(domain)) == [FindingCode.NAMESERVERS_WRONG]
    wrong = findings(domain)[FindingCode.NAMESERVERS_WRONG]
    assert wrong["nameservers"] == [NS1, NS2]
    assert wrong["records"] == [f"CNAME {OLD}."]
    assert f"No name server of {ZONE} gives the record the platform needs" in wrong["message"]


def test_a_row_shows_the_whole_answer_of_a_server_with_an_a_record_beside_the_cname(zone, www):
    """Such a server answers the A question with the A alone; its CNAME, asked too, is shown
    beside it, as the check finds them both."""
    for server in (zone.resolver, zone.server(NS1)):
        server.add(WWW, "CNAME", TARGET + ".")
        server.add(WWW, "A", "192.0.2.10")
    zone.delegate(NS1)
    domain = check(www)
    assert domain.check_code == CheckCode.CONFLICTING_RECORD
    assert domain.check_found == f"CNAME {TARGET}; A 192.0.2.10"
    assert answers(domain) == [(NS1, "127.0.0.2", f"CNAME {TARGET}., A 192.0.2.10", False)]


def test_a_silent_server_is_unreachable_even_when_the_domain_verifies(zone, www):
    zone.delegate(NS1, NS2, NS3)
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == CheckCode.OK
    assert domain.state in (State.VERIFIED, State.ISSUING)
    assert answers(domain)[2] == (NS3, "127.0.0.4", "no answer", False)
    assert list(findings(domain)) == [FindingCode.NAMESERVER_UNREACHABLE]
    unreachable = findings(domain)[FindingCode.NAMESERVER_UNREACHABLE]
    assert unreachable["nameservers"] == [NS3]
    assert "lame delegation" in unreachable["message"]


def test_a_check_with_a_silent_server_ends_within_the_verify_deadline(
    zone, www, settings, monkeypatch
):
    """The check and its doctor run on one clock, the Verify deadline's (not the 10 s the
    resolver and the sweep allow); the silent server is asked once and waited for until
    that clock runs out: its answer is none."""
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 1.0
    zone.delegate(NS1, NS2, NS3)
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    clocks: list[float | None] = []
    resolver = lookups.get_resolver

    def get_resolver(lifetime: float | None = None) -> Any:
        clocks.append(lifetime)
        return resolver(lifetime)

    monkeypatch.setattr(lookups, "get_resolver", get_resolver)
    check_domain(www.pk)
    assert clocks == [settings.DOMAINS_VERIFY_DEADLINE]
    assert list(zone.server(NS3).queries) == [(WWW, "A")]
    domain = Domain.objects.get(pk=www.pk)
    assert domain.check_code == CheckCode.OK
    assert list(findings(domain)) == [FindingCode.NAMESERVER_UNREACHABLE]


@pytest.mark.django_db(transaction=True)
def test_another_tenants_check_meanwhile_is_not_held(zone, www, bobs, bob, settings):
    """A tenant's silent server costs its own check the deadline, no one else's: two
    Verify checks on two threads, as the checks worker runs them; the other tenant's is
    recorded while the silent one still waits."""
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 3.0
    zone.delegate(NS1, NS2, NS3)
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    other = domain_add(project=bobs, hostname="shop.other.test", actor=bob)
    zone.resolver.add("shop.other.test", "CNAME", TARGET + ".")
    silent = threading.Thread(target=run_and_close, args=(check_domain, www.pk))
    silent.start()
    wait_for(lambda: len(zone.server(NS3).queries) > 0, what="the question to the silent server")
    run_and_close(check_domain, other.pk)
    assert silent.is_alive()  # still waiting for ns3 meanwhile
    assert Domain.objects.get(pk=other.pk).check_code == CheckCode.OK
    silent.join(timeout=5)
    assert list(findings(Domain.objects.get(pk=www.pk))) == [FindingCode.NAMESERVER_UNREACHABLE]


def run_and_close(task, domain_id: int) -> None:
    try:
        task(domain_id)
    finally:
        connection.close()


def test_resolvers_keeping_the_old_answer_say_until_when(zone, www, time_machine):
    checked = datetime(2026, 11, 2, 12, 0, 10, tzinfo=UTC)
    time_machine.move_to(checked, tick=False)
    zone.resolver.add(WWW, "CNAME", OLD + ".", ttl=3600)
    zone.serve(WWW, "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == CheckCode.WRONG_TARGET
    assert [server[3] for server in answers(domain)] == [True, True]
    cached = findings(domain)[FindingCode.CACHED_ELSEWHERE]
    assert list(findings(domain)) == [FindingCode.CACHED_ELSEWHERE]
    assert cached["records"] == [f"CNAME {OLD}"]
    gone = checked + timedelta(seconds=3600)
    assert f"gone by {gone:%Y-%m-%d} 13:01 UTC" in cached["message"]


def test_an_old_aaaa_beside_the_right_addresses_is_an_extra_address(zone, shop, alice):
    apex = domain_add(project=shop, hostname=ZONE, actor=alice)
    for server in (zone.resolver, zone.server(NS1), zone.server(NS2)):
        server.add(ZONE, "A", TARGET_ADDRESS)
        server.add(ZONE, "AAAA", TARGET_ADDRESS6, "2001:db8::dead")
    domain = check(apex)
    assert domain.check_code == CheckCode.CONFLICTING_RECORD
    assert list(findings(domain)) == [FindingCode.EXTRA_ADDRESS]
    extra = findings(domain)[FindingCode.EXTRA_ADDRESS]
    assert extra["records"] == ["AAAA 2001:db8::dead"]
    assert "Let's Encrypt prefers IPv6" in extra["message"]
    assert all(not server[3] for server in answers(domain))


def test_a_live_domain_is_asked_only_when_its_check_fails(zone, www):
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    go_live(www)
    assert check(www).check_diagnosis is None  # passing: its servers are not asked
    zone.server(NS2).remove(WWW)
    zone.server(NS2).add(WWW, "CNAME", OLD + ".")
    zone.resolver.remove(WWW)
    zone.resolver.add(WWW, "CNAME", OLD + ".")
    domain = check(www)
    assert domain.check_code == CheckCode.WRONG_TARGET
    assert findings(domain)[FindingCode.NAMESERVERS_DISAGREE]["nameservers"] == [NS2]


def test_the_txt_proof_is_asked_of_each_server_when_the_name_is_contested(zone, www, bobs, bob):
    rival = domain_add(project=bobs, hostname=WWW, actor=bob)
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    proof = f"_petstore-verification.{WWW}"
    zone.serve(proof, "TXT", f'"{rival.verification_token}"', on=(NS1,))
    zone.resolver.add(proof, "TXT", f'"{rival.verification_token}"')
    domain = check(rival)
    assert [server[3] for server in answers(domain)] == [True, False]
    assert f'TXT "{rival.verification_token}"' in answers(domain)[0][2]
    assert findings(domain)[FindingCode.NAMESERVERS_DISAGREE]["nameservers"] == [NS2]


def test_the_closest_enclosing_zone_is_the_one_asked(zone, shop, alice):
    """www.sub.example.test lives in sub.example.test, delegated to ns1 alone; a name with
    no CNAME may be a zone of its own (api.example.test, on ns2), so its NS is asked too."""
    zone.resolver.add("sub.example.test", "NS", f"{NS1}.")
    zone.resolver.add("www.sub.example.test", "CNAME", TARGET + ".")
    zone.serve("www.sub.example.test", "CNAME", TARGET + ".", on=(NS1,))
    sub = check(domain_add(project=shop, hostname="www.sub.example.test", actor=alice))
    assert answers(sub) == [(NS1, "127.0.0.2", f"CNAME {TARGET}.", True)]
    zone.resolver.add("api.example.test", "NS", f"{NS2}.")
    zone.resolver.add("api.example.test", "A", "192.0.2.10")
    zone.serve("api.example.test", "A", "192.0.2.10", on=(NS2,))
    own = check(domain_add(project=shop, hostname="api.example.test", actor=alice))
    assert answers(own) == [(NS2, "127.0.0.3", "A 192.0.2.10", False)]
    assert own.check_code == CheckCode.CONFLICTING_RECORD


def test_an_apexs_old_addresses_kept_by_the_resolvers_are_named_one_by_one(
    zone, shop, alice, time_machine
):
    time_machine.move_to(datetime(2026, 11, 2, 12, 0, tzinfo=UTC), tick=False)
    apex = domain_add(project=shop, hostname=ZONE, actor=alice)
    zone.serve(ZONE, "A", TARGET_ADDRESS)
    zone.serve(ZONE, "AAAA", TARGET_ADDRESS6)
    zone.resolver.add(ZONE, "A", "192.0.2.7", ttl=600)
    zone.resolver.add(ZONE, "AAAA", "2001:db8::7", ttl=120)
    domain = check(apex)
    assert domain.check_code == CheckCode.WRONG_TARGET
    cached = findings(domain)[FindingCode.CACHED_ELSEWHERE]
    assert cached["records"] == ["A 192.0.2.7", "AAAA 2001:db8::7"]
    assert "gone by 2026-11-02 12:10 UTC" in cached["message"]  # the longer TTL of the two
    assert [server[2] for server in answers(domain)] == [
        f"A {TARGET_ADDRESS}, AAAA {TARGET_ADDRESS6}"
    ] * 2


def test_a_name_server_whose_name_has_no_address_is_unreachable(zone, www):
    zone.resolver.add(ZONE, "NS", f"ns9.{ZONE}.")  # named in the zone's NS records, nowhere else
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    domain = check(www)
    assert answers(domain)[2] == (
        f"ns9.{ZONE}",
        "",
        "no address (its name has no A or AAAA record)",
        False,
    )
    assert findings(domain)[FindingCode.NAMESERVER_UNREACHABLE]["nameservers"] == [f"ns9.{ZONE}"]


def test_a_diagnosis_that_raises_leaves_its_check_and_the_batch_alone(
    zone, www, shop, alice, monkeypatch
):
    other = domain_add(project=shop, hostname="shop.example.test", actor=alice)
    for name in (WWW, "shop.example.test"):
        zone.resolver.add(name, "CNAME", TARGET + ".")
        zone.serve(name, "CNAME", TARGET + ".")
    real = doctor.diagnose

    def diagnose(hostname, **kwargs):
        if hostname == WWW:
            raise RuntimeError("a reply the doctor chokes on")
        return real(hostname, **kwargs)

    monkeypatch.setattr(doctor, "diagnose", diagnose)
    domain_check_many(domain_ids=[www.pk, other.pk])
    broken, fine = Domain.objects.get(pk=www.pk), Domain.objects.get(pk=other.pk)
    assert broken.check_code == fine.check_code == CheckCode.OK
    assert broken.check_diagnosis is None
    assert diagnosis(fine)["findings"] == []
