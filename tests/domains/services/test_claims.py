"""Claims on host names: nobody can take over a dangling domain or squat a name, a TXT proof
moves a name, and a rival's mere claim never takes a live domain offline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from domains.choices import CheckCode, State
from domains.models import Domain, DomainEvent, ProvenHostname
from domains.selectors import contested_claims, is_contested
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.projects import deploy_record, project_create
from tests.fixtures.domains import TARGET, TARGET_ADDRESS, TARGET_ADDRESS6, check, in_step

pytestmark = pytest.mark.django_db

VICTIM = "www.victim.test"


def prove(dns_server, *claims: Domain) -> None:
    """The owner of the DNS publishes these claims' tokens in the ownership TXT record."""
    name = claims[0].ownership_txt_name
    dns_server.remove(name)
    dns_server.add(name, "TXT", *(f'"{claim.verification_token}"' for claim in claims))


def served_for(client, host: str) -> bytes | None:
    response = client.get("/", HTTP_HOST=host)
    return response.content if response.status_code == 200 else None


@pytest.fixture
def cname(dns_server):
    dns_server.add(VICTIM, "CNAME", TARGET + ".")
    return dns_server


def test_a_removed_domain_whose_cname_stayed_cannot_be_taken_without_the_txt_proof(
    client, cname, shop, bobs, alice, bob
):
    mine = check(domain_add(project=shop, hostname=VICTIM, actor=alice))
    assert mine.state == State.ISSUING
    domain_remove(domain=mine, actor=alice)  # the CNAME is left dangling

    theirs = domain_add(project=bobs, hostname=VICTIM, actor=bob)
    assert is_contested(theirs)
    theirs = check(theirs)
    assert theirs.state == State.PENDING
    assert theirs.check_code == CheckCode.OWNERSHIP_REQUIRED
    assert f"_petstore-verification.{VICTIM}" in theirs.check_message
    assert theirs.verification_token in theirs.check_message
    assert served_for(client, VICTIM) is None

    prove(cname, theirs)  # only whoever controls the DNS can do this
    assert check(theirs).state == State.ISSUING
    assert served_for(client, VICTIM) == b"<h1>Bob's place</h1>"


def test_the_deletion_of_an_account_leaves_the_name_contested(cname, shop, bobs, alice, bob):
    check(domain_add(project=shop, hostname=VICTIM, actor=alice))
    get_user_model().objects.filter(pk=alice.pk).delete()  # its only owner: the project goes
    assert not Domain.objects.filter(project__slug="shop").exists()
    assert ProvenHostname.objects.filter(hostname=VICTIM).exists()

    theirs = check(domain_add(project=bobs, hostname=VICTIM, actor=bob))
    assert theirs.check_code == CheckCode.OWNERSHIP_REQUIRED


def test_a_name_beside_one_another_project_proved_is_contested(cname, shop, bobs, alice, bob):
    """A wildcard CNAME (or a copied record) sends every name of the zone to the platform:
    a sibling of a proven name needs the proof too."""
    check(domain_add(project=shop, hostname=VICTIM, actor=alice))
    cname.add("shop.victim.test", "CNAME", TARGET + ".")
    theirs = check(domain_add(project=bobs, hostname="shop.victim.test", actor=bob))
    assert theirs.check_code == CheckCode.OWNERSHIP_REQUIRED


def test_names_one_project_proved_contest_their_registrable_domain_for_every_other():
    """However many names a project proved, its own new claims there need no TXT proof and
    every other project's do; once a second project proved one, both need it."""
    for index in range(3):
        ProvenHostname.objects.create(
            hostname=f"n{index}.victim.test", registrable_domain="victim.test", project_id=7
        )
    claims = [("new.victim.test", 7), ("new.victim.test", 8), ("elsewhere.test", 8)]
    assert contested_claims(claims) == {("new.victim.test", 8)}

    ProvenHostname.objects.create(
        hostname="n9.victim.test", registrable_domain="victim.test", project_id=9
    )
    assert contested_claims(claims) == {("new.victim.test", 7), ("new.victim.test", 8)}


def test_a_copied_apex_address_does_not_hand_over_a_removed_apex(
    dns_server, shop, bobs, alice, bob
):
    dns_server.add("victim.test", "A", TARGET_ADDRESS)
    dns_server.add("victim.test", "AAAA", TARGET_ADDRESS6)
    apex = check(domain_add(project=shop, hostname="victim.test", actor=alice))
    assert apex.state == State.ISSUING
    domain_remove(domain=apex, actor=alice)
    theirs = check(domain_add(project=bobs, hostname="victim.test", actor=bob))
    assert theirs.check_code == CheckCode.OWNERSHIP_REQUIRED
    assert theirs.state == State.PENDING


def test_a_squatter_cannot_block_the_real_owner_nor_take_the_name(
    client, dns_server, shop, bobs, alice, bob
):
    squat = domain_add(project=bobs, hostname=VICTIM, actor=bob)  # bob does not control it
    owners = domain_add(project=shop, hostname=VICTIM, actor=alice)  # not refused
    assert is_contested(owners) and is_contested(squat)

    # The owner creates what alice's dashboard shows: the CNAME and alice's TXT token.
    dns_server.add(VICTIM, "CNAME", TARGET + ".")
    prove(dns_server, owners)
    squat = check(squat)  # bob presses Verify: his token is not there
    assert squat.check_code == CheckCode.OWNERSHIP_REQUIRED and not squat.is_live
    assert check(owners).state == State.ISSUING
    assert served_for(client, VICTIM) == b"<h1>Alice's shop</h1>"
    assert check(squat).check_code == CheckCode.OWNERSHIP_REQUIRED


def test_a_txt_proof_takes_a_name_from_a_live_claim_that_does_not_prove_it(
    client, cname, shop, bobs, alice, bob
):
    hijack = check(domain_add(project=bobs, hostname=VICTIM, actor=bob))  # first, CNAME only
    assert hijack.is_live
    owners = domain_add(project=shop, hostname=VICTIM, actor=alice)
    prove(cname, owners)

    owners = check(owners)
    assert owners.state == State.ISSUING
    hijack.refresh_from_db()
    assert hijack.state == State.LOST
    assert "Another project proved control" in hijack.check_message
    assert DomainEvent.objects.filter(domain=hijack, action="lost").exists()
    assert DomainEvent.objects.filter(domain=owners, action="took_over").exists()
    assert served_for(client, VICTIM) == b"<h1>Alice's shop</h1>"
    # Bob's Verify cannot take it back without his own token in the record.
    assert check(hijack).check_code == CheckCode.OWNERSHIP_REQUIRED


def test_a_rivals_mere_claim_never_takes_a_live_domain_offline(
    client, cname, shop, bobs, alice, bob
):
    mine = check(domain_add(project=shop, hostname=VICTIM, actor=alice))
    rival = check(domain_add(project=bobs, hostname=VICTIM, actor=bob))
    assert rival.check_code == CheckCode.OWNERSHIP_REQUIRED
    mine = check(mine)
    assert mine.is_live and mine.check_code == CheckCode.OK
    assert served_for(client, VICTIM) == b"<h1>Alice's shop</h1>"
    assert DomainEvent.objects.filter(domain=mine, action="rival_claim").exists()


def test_when_both_tokens_are_in_the_record_the_live_claim_keeps_the_name(
    cname, shop, bobs, alice, bob
):
    mine = check(domain_add(project=shop, hostname=VICTIM, actor=alice))
    rival = domain_add(project=bobs, hostname=VICTIM, actor=bob)
    prove(cname, mine, rival)
    rival = check(rival)
    assert rival.check_code == CheckCode.PROVEN_ELSEWHERE
    mine.refresh_from_db()
    assert mine.is_live


def test_at_most_one_claim_is_live_whatever_the_code_does(shop, bobs, alice, bob):
    mine = domain_add(project=shop, hostname=VICTIM, actor=alice)
    rival = domain_add(project=bobs, hostname=VICTIM, actor=bob)
    Domain.objects.filter(pk=mine.pk).update(**in_step(State.ACTIVE))
    with pytest.raises(IntegrityError), transaction.atomic():
        Domain.objects.filter(pk=rival.pk).update(state=State.VERIFIED)


def test_the_platforms_own_names_cannot_be_claimed(shop, alice, settings):
    settings.DASHBOARD_HOST = "app.petstore.example"
    settings.ALLOWED_HOSTS = ["api.petstore.example"]
    for name in (TARGET, "app.petstore.example", "api.petstore.example", "x.app.petstore.example"):
        with pytest.raises(ValidationError) as refused:
            domain_add(project=shop, hostname=name, actor=alice)
        assert refused.value.code == "platform_domain", name


def test_a_rivals_add_remove_loop_writes_one_line_a_day(
    cname, shop, bobs, alice, bob, carol, settings
):
    """A rival adding and removing the name in a loop cannot bury the owner's Activity: one
    line per name and rival project per day (UTC); another rival gets its own line."""
    # The re-add cooldown alone would stop the loop; this is the rule behind it.
    settings.DOMAINS_READD_COOLDOWN = 0
    mine = check(domain_add(project=shop, hostname=VICTIM, actor=alice))
    day = datetime(2026, 3, 2, 0, 30, tzinfo=UTC)
    with time_machine.travel(day, tick=False) as clock:
        for _ in range(60):
            domain_remove(domain=domain_add(project=bobs, hostname=VICTIM, actor=bob), actor=bob)
            clock.shift(timedelta(seconds=1))
        assert rival_lines(mine) == 1
        assert DomainEvent.objects.filter(project=bobs, action="added").count() == 60

        carols = project_create(slug="carols", owner=carol, plan="pro")
        deploy_record(project=carols, html="<h1>Carol's</h1>")
        domain_add(project=carols, hostname=VICTIM, actor=carol)
        assert rival_lines(mine) == 2

        clock.move_to(day.replace(hour=23, minute=59))  # still the same day
        domain_remove(domain=domain_add(project=bobs, hostname=VICTIM, actor=bob), actor=bob)
        assert rival_lines(mine) == 2

        clock.move_to(day + timedelta(days=1))  # the next day, a new line
        domain_remove(domain=domain_add(project=bobs, hostname=VICTIM, actor=bob), actor=bob)
        assert rival_lines(mine) == 3


def rival_lines(domain: Domain) -> int:
    return DomainEvent.objects.filter(domain=domain, action="rival_claim").count()
