"""The SSRF guard: a webhook goes to public HTTPS addresses only, checked at save and again
at each delivery, names resolved through the loopback DNS server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import DeliveryState, EventType
from domains.models import Delivery, WebhookEndpoint
from domains.services.events import record_owner_event
from domains.services.webhooks import endpoint_create
from domains.webhooks.address import check_url
from tests.fixtures.domains import LOOPBACK, TARGET

WEBHOOKS = CHANNELS["webhook"]

pytestmark = pytest.mark.django_db


@pytest.fixture
def production(settings, dns_server):
    settings.DEBUG = False
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    return dns_server


def code_of(url: str) -> str:
    with pytest.raises(ValidationError) as refused:
        check_url(url)
    return str(refused.value.error_list[0].code)


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1/hooks",
        "https://192.168.1.20/hooks",
        "https://172.16.5.5/hooks",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.64.0.1/",
        "https://0.0.0.0/",
        "https://224.0.0.1/",
        "https://[fd00::1]/",
        "https://[fe80::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://127.0.0.1/",
        "https://[::1]/",
    ],
)
def test_private_loopback_and_link_local_addresses_are_refused(production, url):
    assert code_of(url) == "webhook_address"


def test_a_name_resolving_to_loopback_is_refused_in_production(production):
    production.add("sneaky.example.test", "A", "127.0.0.1")
    assert code_of("https://sneaky.example.test/hooks") == "webhook_address"


def test_one_private_address_among_public_ones_is_refused(production):
    production.add("mixed.example.test", "A", "203.0.113.9")
    production.add("mixed.example.test", "AAAA", "fd00::5")
    assert code_of("https://mixed.example.test/") == "webhook_address"


def test_plain_http_is_refused_in_production(production):
    assert code_of("http://hooks.example.com/") == "webhook_scheme"


def test_the_platforms_own_hosts_are_refused(production):
    assert code_of(f"https://{TARGET}/") == "webhook_platform"
    assert code_of("https://shop.petstore.localhost/") == "webhook_platform"


def test_a_name_that_does_not_resolve_is_refused(production):
    assert code_of("https://nowhere.example.test/") == "webhook_unresolvable"


def test_a_public_name_passes_and_is_pinned(production):
    production.add("hooks.example.com", "A", "8.8.8.8")
    target = check_url("https://hooks.example.com:8443/in?x=1")
    assert (target.host, target.port, target.path) == ("hooks.example.com", 8443, "/in?x=1")
    assert target.addresses == ("8.8.8.8",)


def test_under_debug_http_and_loopback_pass_but_private_does_not(settings, dns_server):
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    settings.OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
    assert check_url("http://127.0.0.1:9000/hooks").addresses == ("127.0.0.1",)
    assert code_of("http://10.0.0.1/") == "webhook_address"
    assert code_of("http://169.254.169.254/") == "webhook_address"


def test_an_endpoint_naming_a_private_address_is_refused_at_save(production, shop):
    with pytest.raises(ValidationError) as refused:
        endpoint_create(project=shop, url="https://10.0.0.1/", events=["domain.failing"])
    assert refused.value.error_list[0].code == "webhook_address"
    assert not WebhookEndpoint.objects.exists()


def test_a_name_that_moves_to_a_private_address_is_refused_at_delivery(
    production, shop, www, time_machine
):
    time_machine.move_to(datetime(2026, 11, 2, 12, tzinfo=UTC), tick=False)
    production.add("hooks.example.com", "A", "8.8.8.8")
    created = endpoint_create(
        project=shop, url="https://hooks.example.com/", events=["domain.failing"]
    )
    production.remove("hooks.example.com")
    production.add("hooks.example.com", "A", "192.168.0.10")  # DNS rebinding
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    time_machine.shift(timedelta(seconds=1))
    for delivery_id in WEBHOOKS.due():
        tasks.deliver("webhook", delivery_id)
    [logged] = Delivery.objects.filter(channel="webhook", target_id=created.endpoint.pk)
    assert logged.state == DeliveryState.PENDING  # retried later, never sent there
    assert logged.attempt_log.latest("attempted_at", "pk").status_code is None
    assert "192.168.0.10" in logged.attempt_log.latest("attempted_at", "pk").response


def test_a_name_resolving_to_the_platforms_own_address_is_refused(production):
    production.clear()
    production.add(TARGET, "A", "8.8.4.4")  # the platform's public address, say
    production.add("alias.example.test", "A", "8.8.4.4")
    assert code_of("https://alias.example.test/") == "webhook_platform"
    assert code_of("https://8.8.4.4/") == "webhook_platform"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://[64:ff9b::a00:1]/", id="nat64-10.0.0.1"),
        pytest.param("https://[64:ff9b::7f00:1]/", id="nat64-127.0.0.1"),
        pytest.param("https://[64:ff9b::a9fe:a9fe]/", id="nat64-metadata"),
        pytest.param("https://[64:ff9b:1::808:808]/", id="nat64-local-use"),
        pytest.param("https://[2002:a00:1::1]/", id="6to4-10.0.0.1"),
        pytest.param("https://[2002:a9fe:a9fe::]/", id="6to4-metadata"),
        pytest.param("https://[::10.0.0.1]/", id="ipv4-compatible-10.0.0.1"),
        pytest.param("https://[::127.0.0.1]/", id="ipv4-compatible-loopback"),
        pytest.param("https://[::ffff:192.168.0.1]/", id="ipv4-mapped"),
        pytest.param("https://[::ffff:0:10.0.0.1]/", id="siit-10.0.0.1"),
        pytest.param("https://[::ffff:0:169.254.169.254]/", id="siit-metadata"),
        pytest.param("https://[fec0::1]/", id="site-local"),
        pytest.param("https://[2001:0:4136:e378:8000:63bf:f5ff:fff5]/", id="teredo-10.0.0.10"),
    ],
)
def test_ipv6_forms_wrapping_a_private_ipv4_address_are_refused(production, url):
    assert code_of(url) == "webhook_address"


def test_a_name_whose_aaaa_wraps_a_private_ipv4_address_is_refused(production):
    production.add("nat64.example.test", "AAAA", "64:ff9b::a00:1")
    assert code_of("https://nat64.example.test/") == "webhook_address"


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::808:808", "2002:808:808::1", "::ffff:0:808:808"],
    ids=["nat64", "6to4", "siit"],
)
def test_ipv6_forms_wrapping_a_public_ipv4_address_pass(production, address):
    assert check_url(f"https://[{address}]/").addresses == (address,)


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://hooks.example.com/a\rb", id="cr"),
        pytest.param("https://hooks.example.com/a\nX-Injected: 1", id="lf"),
        pytest.param("https://hooks.example.com/a\tb", id="tab"),
        pytest.param("https://hooks.example.com/a b", id="space"),
        pytest.param("https://hooks.example.com/a\x00", id="nul"),
        pytest.param("https://hooks.example.com/a\x7f", id="del"),
        pytest.param("https://hooks.example.com/a\x85", id="c1-nel"),
        pytest.param("https://hooks.example.com/a\u2028", id="line-separator"),
        pytest.param(" https://hooks.example.com/", id="leading-space"),
        pytest.param("https://hooks.example.com/\n", id="trailing-lf"),
        pytest.param("https://hooks.exa\tmple.com/", id="tab-in-host"),
    ],
)
def test_whitespace_and_control_characters_anywhere_are_refused(production, url):
    production.add("hooks.example.com", "A", "8.8.8.8")
    assert code_of(url) == "webhook_url"


@pytest.mark.parametrize("port", [443, 8443])
def test_the_documented_https_ports_pass(production, port):
    production.add("hooks.example.com", "A", "8.8.8.8")
    assert check_url(f"https://hooks.example.com:{port}/").port == port


@pytest.mark.parametrize("port", [0, 22, 25, 80, 6379, 5432, 8080, 65535])
def test_other_ports_are_refused(production, port):
    production.add("hooks.example.com", "A", "8.8.8.8")
    assert code_of(f"https://hooks.example.com:{port}/") == "webhook_port"


def test_under_debug_any_port_is_for_loopback_only(settings, dns_server):
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    settings.OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
    dns_server.add("hooks.example.com", "A", "8.8.8.8")
    assert check_url("https://127.0.0.1:40123/").port == 40123
    assert code_of("https://hooks.example.com:6379/") == "webhook_port"
    assert code_of("http://hooks.example.com/") == "webhook_port"  # 80 is not an HTTPS port
    assert code_of("https://127.0.0.1:0/") == "webhook_port"
