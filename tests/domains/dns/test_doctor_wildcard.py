"""The domain doctor and a wildcard: each of the zone's name servers (real ones on loopback,
tests/fixtures/nameservers.py) is asked for the `_acme-challenge` CNAME too, a server's row
agrees only when it names the claim's own target, and a server that lacks it, or names
another, is named in a finding. Any other name asks no such question."""

from __future__ import annotations

import pytest

from domains.choices import CheckCode, FindingCode
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check_many
from tests.domains.dns.doctorrows import OLD, WWW, answers, diagnosis, findings
from tests.fixtures.domains import TARGET, check, go_live
from tests.fixtures.nameservers import ADDRESSES, CHALLENGE, NS1, NS2, WILDCARD, ZONE

pytestmark = pytest.mark.django_db


@pytest.fixture
def wildcard(zone, shop, alice) -> Domain:
    """alice's wildcard, its names pointing here on both servers and at the resolvers."""
    for server in (zone.resolver, zone.server(NS1), zone.server(NS2)):
        server.add(WILDCARD, "CNAME", TARGET + ".")
    return domain_add(project=shop, hostname=WILDCARD, actor=alice)


def delegation(domain: Domain) -> str:
    """The row's record of a server that gives the claim's delegation."""
    return f"{CHALLENGE} CNAME {domain.acme_challenge_target}."


def test_the_server_without_the_delegation_disagrees_and_is_named(zone, wildcard):
    """The resolvers got the delegation from ns1, so the check passes; ns2 lacks it, which a
    CA asking ns2 finds."""
    zone.resolver.add(CHALLENGE, "CNAME", wildcard.acme_challenge_target)
    zone.serve(CHALLENGE, "CNAME", wildcard.acme_challenge_target, on=(NS1,))
    domain = check(wildcard)

    assert domain.check_code == CheckCode.OK
    assert answers(domain) == [
        (NS1, ADDRESSES[NS1], f"CNAME {TARGET}., {delegation(wildcard)}", True),
        (NS2, ADDRESSES[NS2], f"CNAME {TARGET}.", False),
    ]
    assert list(findings(domain)) == [FindingCode.CHALLENGE_NOT_DELEGATED]
    finding = findings(domain)[FindingCode.CHALLENGE_NOT_DELEGATED]
    assert finding["nameservers"] == [NS2]
    assert finding["records"] == ["no record"]
    assert (
        f"{NS2}, a name server of {ZONE}, does not give {delegation(wildcard)} (it gives no "
        "record)." in finding["message"]
    )
    for server in (NS1, NS2):
        assert sorted(zone.server(server).queries) == [(WILDCARD, "A"), (CHALLENGE, "CNAME")]


def test_a_server_whose_delegation_names_another_target_disagrees(zone, wildcard):
    zone.serve(CHALLENGE, "CNAME", wildcard.acme_challenge_target, on=(NS1,))
    zone.serve(CHALLENGE, "CNAME", OLD + ".", on=(NS2,))
    domain = check(wildcard)

    assert domain.check_code == CheckCode.CHALLENGE_NOT_DELEGATED  # the resolvers have none
    assert answers(domain)[1] == (
        NS2,
        ADDRESSES[NS2],
        f"CNAME {TARGET}., {CHALLENGE} CNAME {OLD}.",
        False,
    )
    finding = findings(domain)[FindingCode.CHALLENGE_NOT_DELEGATED]
    assert finding["nameservers"] == [NS2]
    assert finding["records"] == [f"{CHALLENGE} CNAME {OLD}."]


def test_servers_that_both_delegate_have_no_finding(zone, wildcard):
    zone.resolver.add(CHALLENGE, "CNAME", wildcard.acme_challenge_target)
    zone.serve(CHALLENGE, "CNAME", wildcard.acme_challenge_target)
    domain = check(wildcard)

    assert domain.check_code == CheckCode.OK
    assert diagnosis(domain)["findings"] == []
    assert [(row[0], row[2], row[3]) for row in answers(domain)] == [
        (server, f"CNAME {TARGET}., {delegation(wildcard)}", True) for server in (NS1, NS2)
    ]


def test_servers_that_both_delegate_while_the_resolvers_keep_the_old_answer_say_so(zone, wildcard):
    """The panel never reads "all is well" above a failed check: the resolvers still keep
    the old CNAME, which goes by itself."""
    zone.resolver.add(CHALLENGE, "CNAME", OLD + ".", ttl=600)
    zone.serve(CHALLENGE, "CNAME", wildcard.acme_challenge_target)
    domain = check(wildcard)

    assert domain.check_code == CheckCode.CHALLENGE_NOT_DELEGATED
    assert [row[3] for row in answers(domain)] == [True, True]
    assert list(findings(domain)) == [FindingCode.CACHED_ELSEWHERE]
    cached = findings(domain)[FindingCode.CACHED_ELSEWHERE]
    assert cached["records"] == [f"CNAME {OLD}"]
    assert cached["message"].startswith(
        f"Every name server of {ZONE} gives {delegation(wildcard)}, but the resolvers still "
        f"keep the old answer (CNAME {OLD})."
    )


def test_no_server_with_the_delegation_names_them_all_and_nothing_else(zone, wildcard):
    """The names' record is right everywhere: the one finding is the delegation's, never
    "no server gives the record the platform needs"."""
    domain = check(wildcard)

    assert domain.check_code == CheckCode.CHALLENGE_NOT_DELEGATED
    assert [row[3] for row in answers(domain)] == [False, False]
    assert list(findings(domain)) == [FindingCode.CHALLENGE_NOT_DELEGATED]
    finding = findings(domain)[FindingCode.CHALLENGE_NOT_DELEGATED]
    assert finding["nameservers"] == [NS1, NS2]
    assert f"{NS1} and {NS2}, name servers of {ZONE}, do not give" in finding["message"]


def test_a_name_that_is_no_wildcard_asks_no_challenge_question(zone, www):
    zone.resolver.add(WWW, "CNAME", TARGET + ".")
    zone.serve(WWW, "CNAME", TARGET + ".")
    domain = check(www)

    assert diagnosis(domain)["findings"] == []
    for server in (NS1, NS2):
        assert list(zone.server(server).queries) == [(WWW, "A")]


@pytest.mark.parametrize("alice_first", [True, False])
def test_two_projects_claims_of_one_wildcard_are_each_held_to_their_own_target(
    zone, wildcard, bobs, bob, alice_first
):
    """Both servers delegate to alice's claim's target: her diagnosis has no finding, bob's
    names both servers, in whichever order the batch holds them."""
    rival = domain_add(project=bobs, hostname=WILDCARD, actor=bob)
    proofs = [f'"{claim.verification_token}"' for claim in (wildcard, rival)]
    for server in (zone.resolver, zone.server(NS1), zone.server(NS2)):
        server.add(wildcard.ownership_txt_name, "TXT", *proofs)
        server.add(CHALLENGE, "CNAME", wildcard.acme_challenge_target)
    batch = [wildcard.pk, rival.pk] if alice_first else [rival.pk, wildcard.pk]
    domain_check_many(domain_ids=batch)

    alices, bobs_claim = Domain.objects.get(pk=wildcard.pk), Domain.objects.get(pk=rival.pk)
    assert alices.check_code == CheckCode.OK
    assert diagnosis(alices)["findings"] == []
    assert [row[3] for row in answers(alices)] == [True, True]
    assert bobs_claim.check_code == CheckCode.CHALLENGE_NOT_DELEGATED
    assert [row[3] for row in answers(bobs_claim)] == [False, False]
    assert list(findings(bobs_claim)) == [FindingCode.CHALLENGE_NOT_DELEGATED]
    finding = findings(bobs_claim)[FindingCode.CHALLENGE_NOT_DELEGATED]
    assert finding["nameservers"] == [NS1, NS2]
    assert finding["records"] == [delegation(wildcard)]
    assert delegation(rival) in finding["message"]


def test_a_live_wildcard_whose_check_fails_has_the_server_without_it_named(zone, wildcard):
    """Asked after the failing check (a live domain's servers are not asked with it)."""
    zone.serve(CHALLENGE, "CNAME", wildcard.acme_challenge_target, on=(NS1,))
    go_live(wildcard)
    domain = check(wildcard)

    assert domain.check_code == CheckCode.CHALLENGE_NOT_DELEGATED
    assert [row[3] for row in answers(domain)] == [True, False]
    assert findings(domain)[FindingCode.CHALLENGE_NOT_DELEGATED]["nameservers"] == [NS2]
