"""Names the public cannot resolve are refused wherever a tenant names one: a special-use
suffix (`.internal`, `.local`, `.arpa`, `.onion`, ...) or a top-level domain outside the
Public Suffix List's ICANN section. Only the platform's own resolver could answer for them,
from a private view (a VPC's, a cluster's) that no tenant may read through a check's
`found` or a webhook's refusal. Add domain on the dashboard, the domains API (the Error
body) and a webhook's URL refuse each with its own code and sentence, before any question
about the name is asked; `.test` is allowed only by DOMAINS_LOCAL_SUFFIXES (the suite's,
as `make run`'s)."""

from __future__ import annotations

import html

import pytest
from django.core.exceptions import ValidationError

from domains.api.errors import REFUSAL_STATUS
from domains.choices import NAME_REFUSALS, SPECIAL_USE_SUFFIXES, NameCode
from domains.dns import hostnames
from domains.models import Domain, WebhookEndpoint
from domains.services.custom_domains import domain_add
from domains.webhooks.address import check_url
from tests.domains.api.helpers import SHOP, post
from tests.pets.helpers import assert_error

pytestmark = pytest.mark.django_db

# A name under each special-use suffix.
SPECIAL = {suffix: f"db.corp.{suffix}" for suffix in SPECIAL_USE_SUFFIXES}
# The names the attack used, each with the code and suffix its refusal names.
SEEN = {
    "db.corp.internal": (NameCode.SPECIAL_USE, "internal"),
    "ip-10-0-0-5.ec2.internal": (NameCode.SPECIAL_USE, "internal"),
    "metadata.google.internal": (NameCode.SPECIAL_USE, "internal"),
    "redis.default.svc.cluster.local": (NameCode.SPECIAL_USE, "local"),
    "printer.home.arpa": (NameCode.SPECIAL_USE, "home.arpa"),
    "nas.lan": (NameCode.SPECIAL_USE, "lan"),
    "1.0.0.10.in-addr.arpa": (NameCode.SPECIAL_USE, "arpa"),
    "a.b.onion": (NameCode.SPECIAL_USE, "onion"),
    "shop.example": (NameCode.SPECIAL_USE, "example"),
    "db.intranet": (NameCode.NOT_PUBLIC, "intranet"),
    "vault.svc.cluster": (NameCode.NOT_PUBLIC, "cluster"),
}


@pytest.fixture
def nothing_local(settings):
    """Production's setting: no suffix outside the public DNS is allowed, `.test` neither;
    the dashboard and the API on hosts of their own (as in production), not `localhost`,
    every name under which is the platform's."""
    settings.DOMAINS_LOCAL_SUFFIXES = []
    settings.DASHBOARD_HOST = "dashboard.petstore.example"
    settings.API_BASE_URL = "https://api.petstore.example/v1"


def sentence(name: str, code: str, suffix: str) -> str:
    use = SPECIAL_USE_SUFFIXES.get(suffix, "")
    return NAME_REFUSALS[code].format(name=name, suffix=suffix, use=use)


@pytest.mark.parametrize("suffix", sorted(SPECIAL_USE_SUFFIXES))
def test_each_special_use_suffix_is_refused_at_add_on_the_dashboard_and_the_api(
    nothing_local, api, alice_client, shop, dns_server, suffix
):
    name = SPECIAL[suffix]
    expected = sentence(name, NameCode.SPECIAL_USE, suffix)
    body = assert_error(post(api, f"{SHOP}/domains", {"hostname": name}), 400, "special_use_name")
    assert body["message"] == expected
    page = alice_client.post("/dashboard/projects/shop/domains/add/", {"hostname": name})
    assert expected in html.unescape(page.content.decode())
    assert not Domain.objects.exists()
    assert not [asked for asked in dns_server.queries if asked[0].endswith(suffix)]


@pytest.mark.parametrize("suffix", sorted(SPECIAL_USE_SUFFIXES))
def test_each_special_use_suffix_is_refused_for_a_webhook_before_it_is_resolved(
    nothing_local, api, alice_client, shop, dns_server, suffix
):
    name = SPECIAL[suffix]
    dns_server.add(name, "A", "10.20.30.40")  # what a private view would answer
    url = f"https://{name}/hooks"
    answer = post(api, f"{SHOP}/webhooks", {"url": url, "events": ["domain.failing"]})
    body = assert_error(answer, 400, "special_use_name")
    assert body["message"] == sentence(name, NameCode.SPECIAL_USE, suffix)
    assert "10.20.30.40" not in body["message"]
    form = {"project": shop.pk, "url": url, "events": ["domain.failing"]}
    page = alice_client.post("/dashboard/settings/notifications/webhooks/add/", form)
    assert page.status_code == 400
    assert body["message"] in html.unescape(page.content.decode())
    assert not WebhookEndpoint.objects.exists()
    assert not [asked for asked in dns_server.queries if asked[0] == name]


@pytest.mark.parametrize("name", sorted(SEEN))
def test_the_names_of_private_views_are_refused_with_their_own_code(
    nothing_local, shop, dns_server, name
):
    code, suffix = SEEN[name]
    for attempt in (
        lambda: domain_add(project=shop, hostname=name, actor=None),
        lambda: check_url(f"https://{name}/"),
    ):
        with pytest.raises(ValidationError) as refused:
            attempt()
        assert refused.value.code == code
        assert refused.value.messages == [sentence(name, code, suffix)]
    assert not dns_server.queries


def test_test_names_are_refused_unless_a_setting_allows_them(settings, shop, dns_server):
    settings.DOMAINS_LOCAL_SUFFIXES = []
    with pytest.raises(ValidationError) as refused:
        domain_add(project=shop, hostname="www.example.test", actor=None)
    assert refused.value.code == NameCode.SPECIAL_USE
    assert "testing (RFC 6761)" in refused.value.messages[0]
    settings.DOMAINS_LOCAL_SUFFIXES = ["test"]
    assert domain_add(project=shop, hostname="www.example.test", actor=None).hostname


def test_a_local_suffix_allows_only_itself(settings):
    settings.DOMAINS_LOCAL_SUFFIXES = ["test"]
    assert hostnames.is_public_name("ns1.example.test")
    assert not hostnames.is_public_name("ns1.corp.internal")
    assert not hostnames.is_public_name("printer.home.arpa")
    assert not hostnames.is_public_name("contest")  # a suffix is whole labels


@pytest.mark.parametrize(
    "name",
    ["shop.example.com", "shop.example.co.uk", "a.github.io", "bücher.de", "xn--bcher-kva.de"],
)
def test_names_under_public_top_level_domains_pass(nothing_local, name):
    assert hostnames.is_public_name(name)
    hostnames.refuse_not_public(name)


def test_every_name_code_has_an_http_status_and_a_sentence():
    assert {code: REFUSAL_STATUS.get(code) for code in NameCode} == dict.fromkeys(NameCode, 400)
    assert set(NAME_REFUSALS) == set(NameCode)
