"""Serving a wildcard domain: any name one label under it gets the wildcard's certificate
and project, and a name another project proved keeps its own certificate and page.

The wildcard's rows are made as a verified wildcard leaves them; its certificate is issued by
the tests' CA for `*.shop.example.test`, as every certificate here is.
"""

from __future__ import annotations

import pytest
from cryptography import x509

from domains.choices import State
from domains.edge.paths import CERTIFICATE_PATH
from domains.models import Certificate, Domain, ProvenHostname
from domains.routing.resolver import Page, resolve
from domains.services import certificates
from domains.services.custom_domains import domain_add
from tests.domains.edge.test_endpoint import call
from tests.fixtures.domains import go_live

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("edge_secret")]

WILDCARD = "*.shop.example.test"


def issued(domain: Domain) -> Certificate:
    go_live(domain, State.ISSUING)
    certificate = certificates.certificate_issue(domain_id=domain.pk)
    assert certificate is not None
    return certificate


@pytest.fixture
def wildcard(dns_server, shop) -> Certificate:
    return issued(Domain.objects.create(project=shop, hostname=WILDCARD))


def served_names(body: bytes) -> list[str]:
    leaf = x509.load_pem_x509_certificates(body)[0]
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return san.get_values_for_type(x509.DNSName)


@pytest.mark.parametrize("server_name", ["a.shop.example.test", "Other.Shop.Example.Test."])
def test_any_name_one_label_under_a_live_wildcard_gets_its_certificate(
    endpoint, wildcard, server_name
):
    status, body = call(endpoint, CERTIFICATE_PATH, f"server_name={server_name}")
    assert status == "200 OK"
    assert body.decode().startswith(wildcard.pem.strip())
    assert served_names(body) == [WILDCARD]


@pytest.mark.parametrize(
    "server_name", ["shop.example.test", "a.b.shop.example.test", "a.example.test"]
)
def test_a_wildcard_covers_one_label_only(endpoint, wildcard, server_name):
    assert call(endpoint, CERTIFICATE_PATH, f"server_name={server_name}") == ("204 No Content", b"")


def test_another_projects_more_specific_name_keeps_its_own_certificate_and_page(
    endpoint, wildcard, bobs, bob
):
    own = issued(domain_add(project=bobs, hostname="a.shop.example.test", actor=bob))
    endpoint.cache.refresh()

    body = call(endpoint, CERTIFICATE_PATH, "server_name=a.shop.example.test")[1]
    assert body.decode().startswith(own.pem.strip())
    assert served_names(body) == ["a.shop.example.test"]
    assert served_names(call(endpoint, CERTIFICATE_PATH, "server_name=b.shop.example.test")[1]) == [
        WILDCARD
    ]
    bobs_page, alices_page = resolve("a.shop.example.test"), resolve("b.shop.example.test")
    assert isinstance(bobs_page, Page) and bobs_page.deploy.project == bobs
    assert isinstance(alices_page, Page) and alices_page.deploy.project == wildcard.domain.project


def test_a_wildcard_no_longer_live_serves_nothing(endpoint, wildcard):
    assert resolve("a.shop.example.test") is not None
    Domain.objects.filter(pk=wildcard.domain_id).delete()
    endpoint.cache.refresh()

    assert call(endpoint, CERTIFICATE_PATH, "server_name=a.shop.example.test") == (
        "204 No Content",
        b"",
    )
    assert resolve("a.shop.example.test") is None


def test_a_name_another_project_proved_is_never_the_wildcards(endpoint, wildcard, bobs):
    """bob proved a.shop.example.test once and removed his claim: the name is still his
    proof, not the wildcard owner's to take; its sibling is the wildcard's."""
    ProvenHostname.objects.create(
        hostname="a.shop.example.test", registrable_domain="example.test", project_id=bobs.pk
    )
    endpoint.cache.refresh()

    assert call(endpoint, CERTIFICATE_PATH, "server_name=a.shop.example.test") == (
        "204 No Content",
        b"",
    )
    assert resolve("a.shop.example.test") is None
    assert served_names(call(endpoint, CERTIFICATE_PATH, "server_name=b.shop.example.test")[1]) == [
        WILDCARD
    ]
