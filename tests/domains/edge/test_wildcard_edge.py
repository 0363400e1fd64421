"""A wildcard domain over real TLS: Caddy presents the wildcard's certificate for any name one
label under it, verified by Python's ssl as a browser checks it, and the web process serves
the wildcard's project; another project's own name under it keeps its own certificate."""

from __future__ import annotations

import ssl

import pytest

from domains.choices import State
from domains.models import Domain
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_remove
from tests.fixtures.domains import go_live
from tests.fixtures.edge import serial

pytestmark = pytest.mark.django_db(transaction=True)


def issued_on_edge(edge, domain: Domain) -> str:
    """The domain's certificate from the local CA, as after Verify; its serial."""
    go_live(domain, State.ISSUING)
    certificate = certificates.certificate_issue(domain_id=domain.pk)
    assert certificate is not None
    return certificate.serial


@pytest.fixture
def wildcard(edge, dns_server, shop, alice) -> Domain:
    domain = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    edge.shows("a.shop.example.test", issued_on_edge(edge, domain))
    return domain


def test_two_names_under_a_wildcard_are_served_over_https_with_its_certificate(edge, wildcard):
    for name in ("a.shop.example.test", "b.shop.example.test"):
        presented = edge.handshake(name)
        assert serial(presented) == wildcard.certificate.serial
        assert edge.get(name, "/") == (200, "<h1>Alice's shop</h1>")


def test_another_projects_name_under_the_wildcard_is_served_with_its_own_certificate(
    edge, wildcard, bobs, bob
):
    bobs_name = domain_add(project=bobs, hostname="a.shop.example.test", actor=bob)
    bobs_serial = issued_on_edge(edge, bobs_name)
    edge.shows("a.shop.example.test", bobs_serial)

    assert serial(edge.handshake("a.shop.example.test")) == bobs_serial
    assert edge.get("a.shop.example.test", "/") == (200, "<h1>Bob's place</h1>")
    assert serial(edge.handshake("b.shop.example.test")) == wildcard.certificate.serial


def test_after_remove_no_name_under_the_wildcard_is_served(edge, wildcard, alice):
    domain_remove(domain=wildcard, actor=alice)

    edge.shows("b.shop.example.test", None)
    with pytest.raises((ssl.SSLError, OSError)):
        edge.handshake("b.shop.example.test")
