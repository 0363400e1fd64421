"""The SSRF guard: a webhook goes to public HTTPS addresses only, checked at save and again
at each delivery, names resolved through the loopback DNS server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError

from domains import tasks
from domains.choices import DeliveryState, EventType
from domains.models import WebhookDelivery, WebhookEndpoint
from domains.services.events import record_owner_event
from domains.services.webhooks import endpoint_create
from domains.webhooks import delivery
from domains.webhooks.address import check_url
from tests.fixtures.domains import TARGET

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
    tasks.dispatch_webhooks.run()
    for delivery_id in delivery.due():
        tasks.deliver_webhook(delivery_id)
    [logged] = WebhookDelivery.objects.filter(endpoint=created.endpoint)
    assert logged.state == DeliveryState.PENDING  # retried later, never sent there
    assert logged.status_code is None
    assert "192.168.0.10" in logged.response


def test_a_name_resolving_to_the_platforms_own_address_is_refused(production):
    production.clear()
    production.add(TARGET, "A", "8.8.4.4")  # the platform's public address, say
    production.add("alias.example.test", "A", "8.8.4.4")
    assert code_of("https://alias.example.test/") == "webhook_platform"
    assert code_of("https://8.8.4.4/") == "webhook_platform"
