"""Adding a wildcard domain: a paid plan's, shown two records, the second pointing the CA's
`_acme-challenge` name at a name under the platform's domain that is the claim's alone."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from domains.choices import CheckCode, State
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.projects import deploy_record, project_create
from domains.services.verification import domain_check_many
from tests.domains.api.helpers import SHOP, post
from tests.fixtures.domains import TARGET, check

pytestmark = pytest.mark.django_db


def test_a_paid_plan_adds_a_wildcard_and_is_shown_its_two_records(shop, alice):
    domain = domain_add(project=shop, hostname=" *.Shop.Example.Test. ", actor=alice)

    assert (domain.hostname, domain.is_apex, domain.is_wildcard) == (
        "*.shop.example.test",
        False,
        True,
    )
    names, challenge = domain.dns_records(contested=False)
    assert (names["type"], names["name"], names["value"]) == ("CNAME", "*.shop", TARGET)
    assert (challenge["type"], challenge["name"]) == ("CNAME", "_acme-challenge.shop")
    token, under = challenge["value"].split(".", 1)
    assert under == "acme.petstore.localhost"
    assert len(token) == 32 and token not in domain.verification_token


def test_each_claim_on_a_wildcard_has_its_own_challenge_name(shop, bobs, alice, bob):
    alices = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    bobs_claim = domain_add(project=bobs, hostname="*.shop.example.test", actor=bob)
    other = domain_add(project=shop, hostname="*.other.example.test", actor=alice)

    targets = {d.acme_challenge_target for d in (alices, bobs_claim, other)}
    assert len(targets) == 3


def test_the_api_shows_a_wildcards_two_records(api, shop):
    answer = post(api, f"{SHOP}/domains", {"hostname": "*.shop.example.test"})
    assert answer.status_code == 201, answer.content
    records = answer.json()["dns_records"]
    assert [(r["type"], r["name"]) for r in records] == [
        ("CNAME", "*.shop"),
        ("CNAME", "_acme-challenge.shop"),
    ]
    domain = Domain.objects.get()
    assert records[1]["value"] == domain.acme_challenge_target


def test_a_free_plan_is_refused_a_wildcard(alice):
    project = project_create(slug="free", owner=alice, plan="free")
    deploy_record(project=project, html="x")
    with pytest.raises(ValidationError) as refused:
        domain_add(project=project, hostname="*.shop.example.test", actor=alice)
    assert refused.value.code == "plan_required"
    assert not Domain.objects.exists()


def test_staff_commands_name_a_wildcard_as_it_was_added(shop, capsys):
    call_command("adddomain", "shop", "*.shop.example.test")
    assert "CNAME _acme-challenge.shop -> " in capsys.readouterr().out
    call_command("domainstatus", "*.shop.example.test")
    assert "*.shop.example.test" in capsys.readouterr().out


def test_a_paid_plan_is_refused_a_star_anywhere_but_in_front(shop, alice):
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname="shop.*.example.test", actor=alice)
    assert refused.value.code == "wildcard"
    assert refused.value.messages == [
        "A wildcard is a leading *. only, for example *.shop.example.com."
    ]


def test_verify_passes_a_wildcard_only_with_both_records(dns_server, shop, alice):
    domain = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    dns_server.add("*.shop.example.test", "CNAME", TARGET + ".")

    checked = check(domain)
    assert checked.check_code == CheckCode.CHALLENGE_NOT_DELEGATED
    assert checked.state == State.PENDING
    assert checked.check_expected == f"CNAME {domain.acme_challenge_target}"

    dns_server.add("_acme-challenge.shop.example.test", "CNAME", "elsewhere.example.test.")
    assert check(domain).check_code == CheckCode.CHALLENGE_NOT_DELEGATED

    dns_server.remove("_acme-challenge.shop.example.test")
    dns_server.add("_acme-challenge.shop.example.test", "CNAME", domain.acme_challenge_target)
    checked = check(domain)
    assert checked.check_code == CheckCode.OK
    assert checked.is_live


@pytest.mark.parametrize("alice_first", [True, False])
def test_two_projects_claims_of_one_wildcard_in_one_batch_each_meet_their_own_target(
    dns_server, shop, bobs, alice, bob, alice_first
):
    """The CA's name can point at one claim's target: that claim passes, the other fails,
    in whichever order the batch holds them."""
    alices = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    bobs_claim = domain_add(project=bobs, hostname="*.shop.example.test", actor=bob)
    dns_server.add("*.shop.example.test", "CNAME", TARGET + ".")
    dns_server.add(alices.ownership_txt_name, "TXT", f'"{alices.verification_token}"')
    dns_server.add(bobs_claim.ownership_txt_name, "TXT", f'"{bobs_claim.verification_token}"')
    dns_server.add("_acme-challenge.shop.example.test", "CNAME", alices.acme_challenge_target)
    batch = [alices.pk, bobs_claim.pk] if alice_first else [bobs_claim.pk, alices.pk]

    domain_check_many(domain_ids=batch)

    assert Domain.objects.get(pk=alices.pk).check_code == CheckCode.OK
    assert Domain.objects.get(pk=bobs_claim.pk).check_code == CheckCode.CHALLENGE_NOT_DELEGATED
