"""Certificates over DNS-01, end to end: Pebble validates by asking Knot (its DNS server,
tests/fixtures/knot.py), where the RFC 2136 provider wrote the challenge's TXT record; the
platform's own certificate (*.PLATFORM_DOMAIN and PLATFORM_DOMAIN) issued and renewed so."""

from __future__ import annotations

import pytest
from cryptography import x509
from django.core.cache import cache

from devtools.sockets import free_port
from domains.choices import State
from domains.dns.challenges import NotServed
from domains.dns.rfc2136 import Rfc2136
from domains.pki import dns01, sealing
from domains.pki.cas import AcmeCA
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.fallback import RESTING_KEY
from domains.services.platformcertificate import platform_certificate, platform_certificate_renew
from petstore.metrics import store
from tests.domains.pki.acme_front import AcmeFront
from tests.fixtures.domains import go_live
from tests.fixtures.knot import ZONE, following_cnames
from tests.fixtures.pebble import running_pebble

pytestmark = [pytest.mark.acme, pytest.mark.knot, pytest.mark.django_db]

WILDCARD = f"*.{ZONE}"
RECORD = f"_acme-challenge.{ZONE}"


@pytest.fixture
def pebble_on_knot(knot, settings, tmp_path, _pebble_tls):
    """Pebble resolving with Knot: a DNS-01 challenge is validated at Knot's TXT record."""
    knot.start()
    folder = tmp_path / "pebble"
    folder.mkdir()
    # No HTTP-01 is answered here: any port will do.
    with running_pebble(free_port(), knot.address, folder, _pebble_tls) as server:
        settings.DOMAINS_ACME_EMAIL = "platform@example.test"
        yield server


def test_a_wildcard_is_issued_over_dns01_and_its_record_removed_after(knot, pebble_on_knot):
    ca = AcmeCA(
        directory=pebble_on_knot.directory,
        caa_identities=(),
        ca_bundle=str(pebble_on_knot.ca_bundle),
        eab=None,
    )
    issued = dns01.issue([WILDCARD], ca=ca, provider=Rfc2136.from_settings())

    leaf = x509.load_pem_x509_certificates(issued.pem.encode())[0]
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == [WILDCARD]
    assert issued.serial in pebble_on_knot.issued()
    assert pebble_on_knot.validations() == [ZONE]
    # Knot took the record and its removal, both signed, and serves nothing there now.
    assert knot.log().count("DDNS, processing 1 updates") == 2
    assert knot.txt(RECORD) == []


def test_an_owners_wildcard_is_proven_at_the_platforms_name_its_cname_delegates_to(
    knot, settings, tmp_path, _pebble_tls, shop, alice
):
    """The owner's zone delegates `_acme-challenge.shop.example.test` by CNAME, as the
    wildcard's second record says; the platform writes the TXT in its own zone only, and
    Pebble, resolving as a CA does, follows the CNAME to it."""
    settings.PLATFORM_DOMAIN = ZONE
    domain = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    delegated = domain.acme_challenge_target
    knot.other_zones["example.test"] = f"_acme-challenge.shop CNAME {delegated}.\n"
    knot.start()
    with (
        following_cnames(knot) as resolver,
        running_pebble(free_port(), resolver, tmp_path, _pebble_tls) as pebble,
    ):
        settings.DOMAINS_ACME_EMAIL = "platform@example.test"
        ca = AcmeCA(
            directory=pebble.directory, caa_identities=(), ca_bundle=str(pebble.ca_bundle), eab=None
        )
        issued = dns01.issue(
            [domain.hostname],
            ca=ca,
            provider=Rfc2136.from_settings(),
            at=lambda name: delegated,
        )

    leaf = x509.load_pem_x509_certificates(issued.pem.encode())[0]
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["*.shop.example.test"]
    assert issued.serial in pebble.issued()
    # The record was written at the platform's name, never in the owner's zone, and removed.
    assert knot.log().count(f"[{ZONE}.] DDNS, processing 1 updates") == 2
    assert "[example.test.] DDNS" not in knot.log()
    assert knot.txt(delegated) == []


def test_an_owners_verified_wildcard_gets_its_certificate_from_the_ca_over_dns01(
    knot, settings, tmp_path, _pebble_tls, shop, alice
):
    """The certificates worker's path, for a wildcard: no HTTP-01, one DNS-01 run at the
    claim's delegated name, and the domain goes Active with the wildcard certificate."""
    settings.PLATFORM_DOMAIN = ZONE
    domain = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    knot.other_zones["example.test"] = (
        f"_acme-challenge.shop CNAME {domain.acme_challenge_target}.\n"
    )
    # The CAA check climbs to the top-level domain (RFC 8659): Knot answers for it too.
    knot.other_zones["test"] = ""
    knot.start()
    with (
        following_cnames(knot) as resolver,
        running_pebble(free_port(), resolver, tmp_path, _pebble_tls) as pebble,
    ):
        settings.DOMAINS_CA = "acme"
        settings.DOMAINS_ACME_DIRECTORIES = [pebble.directory]
        settings.DOMAINS_ACME_CA_BUNDLE = [str(pebble.ca_bundle)]
        settings.DOMAINS_ACME_EMAIL = "platform@example.test"
        go_live(domain, State.ISSUING)
        certificate = certificates.certificate_issue(domain_id=domain.pk)

    domain.refresh_from_db()
    assert certificate is not None and domain.state == State.ACTIVE
    assert certificate.serial in pebble.issued()
    assert certificate.san == "*.shop.example.test"
    assert knot.txt(domain.acme_challenge_target) == []


def test_a_name_server_that_never_serves_the_record_ends_the_order_at_the_deadline_cleaned_up(
    knot, settings, tmp_path, _pebble_tls
):
    # ns2 is in the zone's NS records, but nothing answers at its address.
    knot.servers[f"ns2.{ZONE}"] = "127.0.0.9"
    knot.start()
    settings.DOMAINS_DNS01_WAIT = 2.0
    settings.DOMAINS_ACME_EMAIL = "platform@example.test"
    with running_pebble(free_port(), knot.address, tmp_path, _pebble_tls) as pebble:
        ca = AcmeCA(pebble.directory, (), str(pebble.ca_bundle), None)
        with pytest.raises(NotServed, match=rf"ns2\.{ZONE} \(127\.0\.0\.9\) did not have it"):
            dns01.issue([WILDCARD], ca=ca, provider=Rfc2136.from_settings())
        # Never told to validate, and the record gone all the same.
        assert pebble.validations() == []
    assert knot.txt(RECORD) == []
    assert knot.log().count("DDNS, processing 1 updates") == 2


def test_the_platform_certificate_is_issued_sealed_and_renewed_only_when_due(
    knot, pebble_on_knot, settings
):
    settings.PLATFORM_DOMAIN = ZONE
    settings.DOMAINS_ACME_DIRECTORIES = [pebble_on_knot.directory]
    settings.DOMAINS_ACME_CA_BUNDLE = [str(pebble_on_knot.ca_bundle)]

    issued = platform_certificate_renew()

    row = platform_certificate()
    assert issued is not None
    assert row is not None
    leaf = x509.load_pem_x509_certificates(row.certificate_pem.encode())[0]
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sorted(names.get_values_for_type(x509.DNSName)) == [WILDCARD, ZONE]
    # Sealed like every key: the row never holds it in clear.
    assert "PRIVATE KEY" not in row.key_pem
    assert sealing.unseal(row.key_pem) == issued.key_pem
    # Both names' values were at one record name; both were removed.
    assert knot.txt(RECORD) == []

    orders = len(pebble_on_knot.orders())
    assert platform_certificate_renew() is None
    assert len(pebble_on_knot.orders()) == orders

    validity = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    renewed = platform_certificate_renew(now=leaf.not_valid_before_utc + validity * 2 / 3)
    assert renewed is not None
    assert renewed.serial != issued.serial
    row = platform_certificate()
    assert row is not None
    assert sealing.unseal(row.key_pem) == renewed.key_pem


def test_the_operators_own_certificate_leaves_the_platforms_alone(knot, settings):
    settings.EDGE_PLATFORM_CERTIFICATE = "/etc/petstore/platform.pem"
    assert platform_certificate_renew() is None
    assert platform_certificate() is None


def test_the_platform_certificate_comes_from_the_next_ca_while_the_first_limits_our_rate(
    knot, pebble_on_knot, settings, _pebble_tls, django_capture_on_commit_callbacks
):
    """As a domain's order does (tests/domains/pki/test_acme_fallback.py): skipped, counted,
    and the first CA not asked again before its Retry-After."""
    ca_file, cert_file, key_file = _pebble_tls
    upstream = pebble_on_knot.directory.removesuffix("/dir")
    front = AcmeFront(upstream, ca_file, cert_file, key_file).start()
    try:
        front.rate_limited = 3600
        settings.PLATFORM_DOMAIN = ZONE
        settings.DOMAINS_ACME_DIRECTORIES = [front.directory, pebble_on_knot.directory]
        settings.DOMAINS_ACME_CA_BUNDLE = [str(pebble_on_knot.ca_bundle)]
        skipped = ("petstore_acme_skips_total", {"ca": front.directory, "reason": "rate_limited"})
        issued_by_next = (
            "petstore_acme_certificates_issued_total",
            {"ca": pebble_on_knot.directory, "fallback": "true"},
        )
        before = [
            store.REGISTRY.get_sample_value(*each) or 0.0 for each in (skipped, issued_by_next)
        ]

        with django_capture_on_commit_callbacks(execute=True):  # counted once stored
            first = platform_certificate_renew()

        assert first is not None
        assert front.new_orders_refused == 1
        after = [
            store.REGISTRY.get_sample_value(*each) or 0.0 for each in (skipped, issued_by_next)
        ]
        assert after == [before[0] + 1, before[1] + 1]
        leaf = x509.load_pem_x509_certificates(first.pem.encode())[0]
        validity = leaf.not_valid_after_utc - leaf.not_valid_before_utc
        assert platform_certificate_renew(now=leaf.not_valid_before_utc + validity * 2 / 3)
        # Resting: the renewal went to the next CA without asking the first.
        assert front.new_orders_refused == 1
    finally:
        front.stop()
        cache.delete(RESTING_KEY.format(front.directory))
