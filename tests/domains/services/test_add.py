"""Adding a domain: host name rules, the record to create, preconditions, and no takeovers."""

from __future__ import annotations

import html
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from domains.choices import State
from domains.dns import hostnames
from domains.models import Domain, DomainEvent
from domains.selectors import is_contested
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.projects import deploy_record, project_create
from tests.fixtures.domains import TARGET

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("typed", "stored", "shown"),
    [
        ("www.example.test", "www.example.test", "www.example.test"),
        ("  WWW.Example.TEST.  ", "www.example.test", "www.example.test"),
        ("Bücher.example.de", "xn--bcher-kva.example.de", "bücher.example.de"),
        ("xn--bcher-kva.example.de", "xn--bcher-kva.example.de", "bücher.example.de"),
        ("пример.рф", "xn--e1afmkfd.xn--p1ai", "пример.рф"),
    ],
)
def test_host_names_are_stored_ascii_and_shown_unicode(shop, alice, typed, stored, shown):
    domain = domain_add(project=shop, hostname=typed, actor=alice)
    assert domain.hostname == stored
    assert domain.hostname_unicode == shown


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("", "required"),
        ("https://www.example.test/", "invalid_hostname"),
        ("www.example.test:8080", "invalid_hostname"),
        ("a.*.example.test", "wildcard"),
        ("*.*.example.test", "wildcard"),
        ("*example.test", "wildcard"),
        ("*.co.uk", "public_suffix"),
        ("*.petstore.localhost", "platform_domain"),
        ("192.0.2.1", "ip_literal"),
        ("[2001:db8::1]", "ip_literal"),
        ("localhost", "invalid_hostname"),
        ("-bad.example.test", "invalid_hostname"),
        ("under_score.example.test", "invalid_hostname"),
        ("a" * 64 + ".example.test", "label_too_long"),
        (".".join(["a" * 60] * 4) + ".example.test", "too_long"),
        ("co.uk", "public_suffix"),
        ("github.io", "public_suffix"),
        ("petstore.localhost", "platform_domain"),
        ("shop.petstore.localhost", "platform_domain"),
        (TARGET, "platform_domain"),
    ],
)
def test_invalid_host_names_are_refused_with_their_own_reason(shop, alice, typed, code):
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname=typed, actor=alice)
    assert refused.value.code == code
    assert refused.value.messages[0]
    assert not Domain.objects.exists()


def test_a_subdomain_is_shown_a_cname_record(shop, alice):
    domain = domain_add(project=shop, hostname="shop.example.co.uk", actor=alice)
    assert domain.is_apex is False
    [record] = domain.dns_records(contested=False)
    assert record["type"] == "CNAME"
    assert record["name"] == "shop"
    assert record["value"] == TARGET
    assert record["ttl"] == 3600


def test_an_apex_is_shown_alias_or_aname_with_the_caveat(shop, alice):
    domain = domain_add(project=shop, hostname="example.co.uk", actor=alice)
    assert domain.is_apex is True
    records = domain.dns_records(contested=False)
    assert [r["type"] for r in records] == ["ALIAS", "ANAME"]
    assert all(r["value"] == TARGET and r["ttl"] == 3600 for r in records)
    assert "Not every DNS provider supports" in records[0]["note"]


def test_a_free_plan_is_refused(alice):
    project = project_create(slug="free", owner=alice, plan="free")
    deploy_record(project=project, html="x")
    with pytest.raises(ValidationError) as refused:
        domain_add(project=project, hostname="www.example.test", actor=alice)
    assert refused.value.code == "plan_required"
    assert "Pro plan or above" in refused.value.messages[0]


@pytest.mark.parametrize("plan", ["pro", "business", "enterprise"])
def test_paid_plans_may_add_domains(alice, plan):
    project = project_create(slug=plan, owner=alice, plan=plan)
    deploy_record(project=project, html="x")
    assert domain_add(project=project, hostname=f"{plan}.example.test", actor=alice)


def test_a_project_without_a_successful_deploy_is_refused(alice):
    project = project_create(slug="fresh", owner=alice, plan="pro")
    deploy_record(project=project, html="x", succeeded=False)
    with pytest.raises(ValidationError) as refused:
        domain_add(project=project, hostname="www.example.test", actor=alice)
    assert refused.value.code == "deploy_required"


def test_a_claim_reserves_nothing_and_the_second_claim_is_told_to_prove_it(shop, bobs, alice, bob):
    first = domain_add(project=shop, hostname="www.example.test", actor=alice)
    second = domain_add(project=bobs, hostname="WWW.EXAMPLE.TEST.", actor=bob)
    assert second.hostname == first.hostname == "www.example.test"
    assert second.verification_token != first.verification_token
    # From the moment the name is contested, both claims are shown their TXT record.
    for claim in (first, second):
        txt = [r for r in claim.dns_records(contested=is_contested(claim)) if r["type"] == "TXT"]
        assert txt == [
            {
                "type": "TXT",
                "name": "_petstore-verification.www",
                "value": claim.verification_token,
                "ttl": 3600,
                "note": txt[0]["note"],
            }
        ]
    # The first claim's project is told in its Activity.
    assert DomainEvent.objects.filter(domain=first, action="rival_claim").exists()


def test_the_unicode_and_ascii_forms_are_the_same_name(shop, bobs, alice, bob):
    domain_add(project=shop, hostname="bücher.example.test", actor=alice)
    other = domain_add(project=bobs, hostname="xn--bcher-kva.example.test", actor=bob)
    assert is_contested(other)


def test_adding_twice_to_the_same_project_says_so(shop, alice):
    domain_add(project=shop, hostname="www.example.test", actor=alice)
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname="www.example.test", actor=alice)
    assert refused.value.code == "duplicate"


def test_adding_records_an_event_with_the_actor(shop, alice):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    event = DomainEvent.objects.get(domain=domain)
    assert (event.action, event.actor, event.hostname) == ("added", alice, "www.example.test")


def test_removed_domain_can_be_added_again_by_someone_else(shop, bobs, alice, bob):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    domain_remove(domain=domain, actor=alice)
    assert domain_add(project=bobs, hostname="www.example.test", actor=bob)
    removed = DomainEvent.objects.get(action="removed")
    assert removed.domain is None and removed.hostname == "www.example.test"


def test_for_member_selects_only_the_members_rows_with_their_role(shop, bobs, alice, bob):
    domain_add(project=shop, hostname="a.example.test", actor=alice)
    domain_add(project=bobs, hostname="b.example.test", actor=bob)
    assert [d.hostname for d in Domain.objects.for_member(alice)] == ["a.example.test"]
    projects = type(shop).objects
    assert [(p.slug, p.role) for p in projects.for_member(bob)] == [("bobs", "owner")]
    assert not projects.for_member(bob, roles=["viewer"]).exists()
    assert Domain.objects.filter(state=State.PENDING).count() == 2


def name_of_length(length: int, under: str = "example.test") -> str:
    """A valid host name of exactly `length` characters under `under`."""
    labels, left = [], length - len(under)  # each label costs its length and a dot
    while left > 0:
        size = min(63, left - 1)
        if left - (size + 1) == 1:  # never leave room for an empty label only
            size -= 1
        labels.append("a" * size)
        left -= size + 1
    name = ".".join([*labels, under])
    assert len(name) == length
    return name


def test_the_longest_name_leaves_room_for_its_verification_record():
    assert hostnames.MAX_HOSTNAME_LENGTH == 230
    longest = name_of_length(hostnames.MAX_HOSTNAME_LENGTH)
    assert len(hostnames.ownership_txt_name(longest)) == 253


@pytest.mark.parametrize("length", [231, 240, 253])
def test_a_name_whose_verification_record_cannot_exist_is_refused(shop, alice, length):
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname=name_of_length(length), actor=alice)
    assert refused.value.code == "too_long"
    assert refused.value.messages == [
        "A domain name can be at most 230 characters long here: its verification record "
        "_petstore-verification.<name> must fit in DNS's 253 characters."
    ]
    assert not Domain.objects.exists()


def test_a_name_of_230_characters_is_added(shop, alice):
    name = name_of_length(230)
    assert domain_add(project=shop, hostname=name, actor=alice).hostname == name


@pytest.mark.parametrize("length", [231, 253])
def test_the_add_domain_form_says_why_a_long_name_is_refused(alice_client, shop, length):
    response = alice_client.post(
        "/dashboard/projects/shop/domains/add/", {"hostname": name_of_length(length)}
    )
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert "can be at most 230 characters long here: its verification record" in page
    assert not Domain.objects.exists()


def test_adddomain_refuses_a_long_name_in_one_line(shop):
    with pytest.raises(CommandError) as refused:
        call_command("adddomain", "shop", name_of_length(240))
    assert str(refused.value) == (
        "A domain name can be at most 230 characters long here: its verification record "
        "_petstore-verification.<name> must fit in DNS's 253 characters."
    )
    assert not Domain.objects.exists()


@pytest.fixture
def platform_hosts(settings):
    """The platform's dashboard and API on hosts of their own registrable domain, as in
    production; the CNAME target under another. Their `.example` names stand for public
    ones here, as the suite's `.test` names do (DOMAINS_LOCAL_SUFFIXES)."""
    settings.DOMAINS_LOCAL_SUFFIXES = [*settings.DOMAINS_LOCAL_SUFFIXES, "example"]
    settings.DASHBOARD_HOST = "app.petstore.example"
    settings.API_BASE_URL = "https://api.petstore-api.example/v1"
    settings.PLATFORM_CNAME_TARGET = "edge.petstore-dns.example"
    return settings


PLATFORM_REGISTRABLE_NAMES = [
    "dashboard-sibling.petstore.example",  # beside the dashboard: same site, same cookies
    "petstore.example",  # the apex above it
    "deep.under.petstore.example",
    "petstore-api.example",  # the API host's registrable domain
    "www.petstore-api.example",
    "petstore-dns.example",  # the CNAME target's
    "shop.petstore-dns.example",
    "other.petstore.localhost",  # PLATFORM_DOMAIN's (refused as before)
]


@pytest.mark.parametrize("name", PLATFORM_REGISTRABLE_NAMES)
def test_the_registrable_domains_of_the_platforms_hosts_cannot_be_claimed(
    shop, alice, platform_hosts, name
):
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname=name, actor=alice)
    assert refused.value.code == "platform_domain"
    assert "platform" in refused.value.messages[0]
    assert not Domain.objects.filter(hostname=name).exists()


def test_a_sibling_of_the_dashboard_is_refused_on_the_form_and_by_the_command(
    alice_client, shop, platform_hosts
):
    response = alice_client.post(
        "/dashboard/projects/shop/domains/add/",
        {"hostname": "dashboard-sibling.petstore.example"},
    )
    assert response.status_code == 400
    assert (
        "dashboard-sibling.petstore.example is under petstore.example, the platform&#x27;s own "
        "domain" in response.content.decode()
    )
    with pytest.raises(CommandError) as refused:
        call_command("adddomain", "shop", "petstore.example", stdout=StringIO())
    assert "is under petstore.example, the platform's own domain" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert not Domain.objects.exists()


def test_names_beside_the_platforms_registrable_domains_are_not_refused(
    shop, alice, platform_hosts
):
    for name in ("petstore.example.net", "mypetstore.example", "shop.example.test"):
        assert domain_add(project=shop, hostname=name, actor=alice).hostname == name
