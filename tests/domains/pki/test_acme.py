"""Certificates from a real ACME server (Pebble): order, HTTP-01 answered by the platform
itself, a certificate whose issuer is Pebble's, renewal, resuming an interrupted order,
and the reasons no certificate is issued (CAA, an invalid authorization)."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from acme import client, messages
from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.utils import timezone

from domains import pki
from domains.choices import CertCode, CertState, State
from domains.models import AcmeChallenge, AcmeOrder, Certificate, Domain
from domains.pki import sealing
from domains.policy import RENEWAL_SPREAD
from domains.services import certificates
from tests.database.drops import drop_this_connection
from tests.fixtures.domains import in_step
from tests.petstore.languages.english import visible_text

pytestmark = pytest.mark.acme


def leaf(certificate: Certificate) -> x509.Certificate:
    return x509.load_pem_x509_certificates(certificate.pem.encode())[0]


def test_a_verified_domain_gets_a_certificate_from_the_acme_ca(verified, pebble):
    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None
    verified.refresh_from_db()
    assert verified.state == State.ACTIVE
    assert verified.cert_state == CertState.ISSUED
    cert = leaf(certificate)
    intermediate = pebble.intermediate()
    cert.verify_directly_issued_by(intermediate)
    assert certificate.issuer.startswith("Pebble Intermediate CA")
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["www.example.test"]
    assert certificate.serial == format(cert.serial_number, "x")
    # The order is done: no challenge is answered any more, no order is left.
    assert not AcmeChallenge.objects.exists()
    assert not AcmeOrder.objects.exists()
    # Renewal is planned from this certificate's validity (Pebble's: 5 years), not 90 days.
    lifetime = certificate.not_after - certificate.not_before
    assert lifetime > timedelta(days=365)
    planned = certificate.not_before + lifetime * 2 / 3
    assert planned - lifetime * RENEWAL_SPREAD <= certificate.renew_after <= planned
    # The private key is sealed at rest and is the certificate's own.
    assert sealing.is_sealed(certificate.key_pem)
    opened = load_pem_private_key(sealing.unseal(certificate.key_pem).encode(), None)
    assert opened.public_key() == cert.public_key()
    # domainstatus names the issuer.
    out = StringIO()
    call_command("domainstatus", "www.example.test", stdout=out)
    shown = json.loads(out.getvalue())["certificate"]
    assert shown["issuer"] == certificate.issuer
    assert shown["ca"] == certificate.ca_directory == pebble.directory


def test_the_challenge_is_answered_on_the_domain_whatever_the_port(verified, client):
    pki.authority().prepare(Domain.objects.get(pk=verified.pk))  # validated by Pebble
    challenge = AcmeChallenge.objects.get(domain=verified)
    path = f"/.well-known/acme-challenge/{challenge.token}"
    answered = client.get(path, HTTP_HOST="www.example.test:5002")
    assert answered.status_code == 200
    assert answered.content.decode() == challenge.key_authorization
    assert client.get(path, HTTP_HOST="other.example.test").status_code == 404
    # Renewal: the domain is active and plain HTTP goes to https, challenges excepted.
    Domain.objects.filter(pk=verified.pk).update(**in_step(State.ACTIVE))
    assert client.get("/", HTTP_HOST="www.example.test:5002").status_code == 301
    assert client.get(path, HTTP_HOST="www.example.test:5002").status_code == 200


def test_renewal_gets_a_new_certificate_from_the_acme_ca(verified):
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None
    assert certificates.certificates_due_for_renewal() == []
    Certificate.objects.filter(pk=first.pk).update(renew_after=timezone.now())
    assert certificates.certificates_due_for_renewal() == [verified.pk]

    renewed = certificates.certificate_renew(domain_id=verified.pk)

    assert renewed is not None and renewed.serial != first.serial
    assert renewed.issuer.startswith("Pebble Intermediate CA")
    assert Domain.objects.get(pk=verified.pk).certificate == renewed
    assert certificates.certificate_renew(domain_id=verified.pk) is None


class WorkerDied(Exception):
    pass


def test_a_run_that_dies_after_the_ca_signed_ends_with_that_one_certificate(verified):
    """The CA finalized the order and signed, then the worker died before its commit: the
    next run resumes that order and stores its certificate, not a second one."""
    authority = pki.authority()
    authority.prepare(Domain.objects.get(pk=verified.pk))
    order = AcmeOrder.objects.get(domain=verified)
    with pytest.raises(WorkerDied), transaction.atomic():
        signed = authority.issue(Domain.objects.select_for_update().get(pk=verified.pk))
        raise WorkerDied
    assert AcmeOrder.objects.get(domain=verified).url == order.url  # rolled back with it

    stored = certificates.certificate_issue(domain_id=verified.pk)
    again = certificates.certificate_issue(domain_id=verified.pk)

    assert stored is not None and stored.serial == signed.serial
    assert again == stored
    assert Certificate.objects.filter(domain=verified).count() == 1


def test_a_second_run_resumes_the_order_instead_of_placing_another(verified):
    authority = pki.authority()
    authority.prepare(Domain.objects.get(pk=verified.pk))
    first = AcmeOrder.objects.get(domain=verified).url
    authority.prepare(Domain.objects.get(pk=verified.pk))
    assert list(AcmeOrder.objects.values_list("url", flat=True)) == [first]
    assert certificates.certificate_issue(domain_id=verified.pk) is not None
    assert Certificate.objects.filter(domain=verified).count() == 1


def test_an_order_placed_as_the_database_drops_the_connection_is_stored_not_placed_again(
    verified, pebble, monkeypatch
):
    """The CA placed the order, then the server ended the worker's connection (a restart)
    before the order was stored: the run stores it on a new connection, and the CA has one
    order for the domain."""
    placing = client.ClientV2.new_order

    def placed_then_dropped(acme: client.ClientV2, csr_pem: bytes) -> messages.OrderResource:
        placed = placing(acme, csr_pem)
        drop_this_connection()
        return placed

    monkeypatch.setattr(client.ClientV2, "new_order", placed_then_dropped)
    pki.authority().prepare(Domain.objects.get(pk=verified.pk))
    monkeypatch.undo()

    assert AcmeOrder.objects.filter(domain=verified).count() == 1
    assert certificates.certificate_issue(domain_id=verified.pk) is not None
    assert len(pebble.orders()) == 1


def test_caa_naming_another_ca_blocks_the_order_with_its_reason(verified, dns_server):
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')

    assert certificates.certificate_issue(domain_id=verified.pk) is None

    verified.refresh_from_db()
    assert verified.state == State.VERIFIED
    assert verified.cert_state == CertState.BLOCKED
    assert 'example.test CAA 0 issue "letsencrypt.org"' in verified.cert_message
    assert not AcmeOrder.objects.exists()  # no order was placed


def test_an_invalid_authorization_is_the_domains_problem_in_the_cas_words(
    verified, dns_server, alice
):
    # The owner removed the name: Pebble cannot resolve it to fetch the challenge. (Where it
    # resolves to us and we do not answer, the fault is ours: test_acme_faults.py.)
    dns_server.remove("www.example.test")

    assert certificates.certificate_issue(domain_id=verified.pk) is None

    verified.refresh_from_db()
    assert verified.state == State.VERIFIED
    assert verified.cert_state == CertState.BLOCKED
    assert verified.cert_code == CertCode.CA_REFUSED
    assert verified.cert_message.startswith("The CA refused the order: ")
    assert "could not resolve" in verified.cert_message  # Pebble's own detail, quoted
    assert not AcmeOrder.objects.exists()  # the next attempt places a new order
    # On a German page: the platform's words in German, Pebble's quoted as it gave them.
    german = Client(HTTP_ACCEPT_LANGUAGE="de")
    german.force_login(alice)
    text = visible_text(
        german.get(f"/dashboard/projects/shop/domains/{verified.hostname}/").content.decode()
    )
    pebble_said = verified.cert_message.removeprefix("The CA refused the order: ")
    assert f"Die Zertifizierungsstelle hat den Auftrag abgelehnt: {pebble_said}" in text
