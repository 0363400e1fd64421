"""An owner's wildcard from a real ACME CA (Pebble) to the real TLS edge, end to end.

Each part runs as in production, in its own process: the owner adds `*.shop.example.test`,
puts its two records in their zone and chooses Verify on the dashboard; a Celery worker on
DOMAINS_CA=acme checks the DNS and orders the certificate over DNS-01, writing the TXT through
RFC 2136 into the platform's DNS-01 primary, the development DNS server
(tests/fixtures/dns01.py), which Pebble also resolves with, following the owner's
`_acme-challenge` CNAME to it; the edge (Caddy and its certificate endpoint) presents the
wildcard's certificate for two names under it and the web process serves the owner's page.
Then another project gets its own `a.shop.example.test` live (Pebble again, over HTTP-01
through the edge's web process): the edge presents that project's certificate and page for
`a.`, and still the wildcard's for `b.`. Then the owner removes the wildcard: `b.` is served
no more, `a.` still is, with its own project's certificate.
"""

from __future__ import annotations

import ssl

import pytest
from cryptography import x509
from django.test import Client

from domains.choices import CertState, State
from domains.dns import lookups
from domains.models import Certificate
from domains.services.custom_domains import domain_add, domain_remove
from tests.fixtures.domains import TARGET
from tests.fixtures.edge import domainstatus, serial
from tests.fixtures.worker import wait_until

pytestmark = [pytest.mark.acme, pytest.mark.django_db(transaction=True)]

WILDCARD = "*.shop.example.test"
A, B = "a.shop.example.test", "b.shop.example.test"
ALICES_PAGE = "<h1>Alice's shop</h1>"
BOBS_PAGE = "<h1>Bob's place</h1>"


@pytest.fixture
def acme_http_port(edge) -> int:
    """Pebble fetches HTTP-01 challenges from the edge's own web process."""
    return int(edge.web.rsplit(":", 1)[1])


@pytest.fixture
def worker(pebble, dns01_primary, start_worker):
    """A worker started once the platform's CA and DNS-01 settings point at Pebble and the
    development DNS server."""
    return start_worker()


@pytest.fixture
def bob_client(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


def verify(client: Client, project: str, hostname: str) -> None:
    """Verify, as the owner chooses it on the domain's page."""
    response = client.post(f"/dashboard/projects/{project}/domains/{hostname}/verify/")
    assert response.status_code == 302


def from_pebble(certificate: Certificate | None, pebble) -> Certificate:
    """The certificate, its leaf checked to be signed by Pebble's intermediate."""
    assert certificate is not None
    leaf = x509.load_pem_x509_certificates(certificate.pem.encode())[0]
    leaf.verify_directly_issued_by(pebble.intermediate())
    return certificate


def test_an_owners_wildcard_from_the_ca_serves_two_names_yields_to_another_projects_and_is_removed(
    edge, pebble, dns01_primary, worker, shop, bobs, alice, bob, alice_client, bob_client
):
    dns = dns01_primary
    # The platform's target resolves to this machine: Pebble's HTTP-01 request for bob's
    # name reaches the edge's web process.
    dns.remove(TARGET)
    dns.add(TARGET, "A", "127.0.0.1")
    wildcard = domain_add(project=shop, hostname=WILDCARD, actor=alice)
    # The two records the dashboard shows, as alice puts them in her zone.
    dns.add(WILDCARD, "CNAME", TARGET + ".")
    dns.add("_acme-challenge.shop.example.test", "CNAME", wildcard.acme_challenge_target + ".")

    verify(alice_client, "shop", WILDCARD)

    wildcard = wait_until(wildcard, worker, state=State.ACTIVE)
    assert wildcard.cert_state == CertState.ISSUED
    certificate = from_pebble(wildcard.certificate, pebble)
    assert certificate.san == WILDCARD
    assert pebble.issued() == [certificate.serial]
    # Validated over DNS-01 at the base name, through the owner's CNAME to the TXT the
    # platform wrote in its own zone and removed after.
    assert pebble.validations() == ["shop.example.test"]
    assert "/.well-known/acme-challenge/" not in pebble.log()
    assert (wildcard.acme_challenge_target, "TXT") in dns.queries
    assert lookups.lookup(wildcard.acme_challenge_target, "TXT").status == lookups.NXDOMAIN
    assert domainstatus(WILDCARD)["certificate"]["serial"] == certificate.serial

    edge.shows(A, certificate.serial)
    for name in (A, B):
        assert serial(edge.handshake(name, cafile=pebble.root_file)) == certificate.serial
        assert edge.get(name, "/", cafile=pebble.root_file) == (200, ALICES_PAGE)

    # bob's project adds the more specific a.shop.example.test and gets it live. alice proved a
    # name of example.test, so the name is contested: bob proves it his with his TXT token.
    bobs_name = domain_add(project=bobs, hostname=A, actor=bob)
    dns.add(A, "CNAME", TARGET + ".")
    dns.add(bobs_name.ownership_txt_name, "TXT", f'"{bobs_name.verification_token}"')
    verify(bob_client, "bobs", A)

    bobs_name = wait_until(bobs_name, worker, state=State.ACTIVE)
    bobs_certificate = from_pebble(bobs_name.certificate, pebble)
    assert bobs_certificate.san == A
    assert pebble.issued() == [certificate.serial, bobs_certificate.serial]
    assert f"http://{A}:{pebble.http_port}/.well-known/acme-challenge/" in pebble.log()

    edge.shows(A, bobs_certificate.serial)
    assert serial(edge.handshake(A, cafile=pebble.root_file)) == bobs_certificate.serial
    assert edge.get(A, "/", cafile=pebble.root_file) == (200, BOBS_PAGE)
    assert serial(edge.handshake(B, cafile=pebble.root_file)) == certificate.serial
    assert edge.get(B, "/", cafile=pebble.root_file) == (200, ALICES_PAGE)

    # Remove: no name under the wildcard is served any more; bob's own name still is.
    domain_remove(domain=wildcard, actor=alice)
    edge.shows(B, None)
    with pytest.raises((ssl.SSLError, OSError)):
        edge.handshake(B, cafile=pebble.root_file)
    assert serial(edge.handshake(A, cafile=pebble.root_file)) == bobs_certificate.serial
