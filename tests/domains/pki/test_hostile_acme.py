"""A hostile ACME CA (tests/domains/pki/fake_acme.py, a real HTTP server on loopback): the
worker follows none of its redirects, and stores no certificate but the one it ordered; a
CA that limits our rate is waited for, and counted by its RFC 8555 error type."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography import x509
from django.test import Client

from domains import pki
from domains.choices import CertCode, CertState, State
from domains.models import AcmeChallenge, AcmeOrder, Certificate, Domain
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from tests.domains.pki.fake_acme import OTHER_NAME, RATE_LIMIT_RETRY_AFTER, FakeAcme, Recorder
from tests.fixtures.domains import TARGET
from tests.petstore.languages.english import english_left, english_runs, visible_text
from tests.petstore.metrics.scrape import TOKEN, Scrape

pytestmark = pytest.mark.django_db

HOST = "www.example.test"


@pytest.fixture
def key_endpoint() -> Iterator[Recorder]:
    """Stands for the edge's loopback key endpoint: it records every request that reaches it."""
    server = Recorder()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fake_acme(settings, key_endpoint) -> Iterator[FakeAcme]:
    """The platform's CA settings point at a fake ACME CA, honest until a test says otherwise."""
    server = FakeAcme(redirect_to=f"{key_endpoint.base}/certificate?server_name={HOST}")
    server.start()
    settings.DOMAINS_CA = "acme"
    settings.DOMAINS_ACME_DIRECTORIES = [server.directory]
    settings.DOMAINS_ACME_CA_BUNDLE = []
    yield server
    server.stop()


@pytest.fixture
def issuing(fake_acme, dns_server, shop, alice) -> Domain:
    """www.example.test, verified: its certificate is requested."""
    dns_server.add(HOST, "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname=HOST, actor=alice)
    domain_check(domain_id=domain.pk)
    domain.refresh_from_db()
    assert domain.state == State.ISSUING
    return domain


def refused_with(domain: Domain) -> str:
    """The domain's refusal: no certificate, no order left, the reason on the domain."""
    domain.refresh_from_db()
    assert domain.state == State.VERIFIED
    assert domain.cert_state == CertState.BLOCKED
    assert domain.cert_code == CertCode.CA_REFUSED
    assert not Certificate.objects.exists()
    assert not AcmeOrder.objects.exists()  # Re-verify places a new order
    assert not AcmeChallenge.objects.exists()
    return domain.cert_message


def test_the_honest_fake_ca_issues_so_each_refusal_below_is_the_platforms(issuing):
    certificate = certificates.certificate_issue(domain_id=issuing.pk)

    assert certificate is not None
    leaf = x509.load_pem_x509_certificates(certificate.pem.encode())[0]
    assert leaf.issuer.rfc4514_string() == "CN=Fake ACME CA"
    assert certificate.san == HOST
    assert Domain.objects.get(pk=issuing.pk).state == State.ACTIVE


@pytest.mark.parametrize("where", ["redirect-directory", "redirect-certificate"])
def test_a_redirect_from_the_ca_is_never_followed_and_refuses_the_order(
    issuing, fake_acme, key_endpoint, where
):
    fake_acme.misbehaviour = where

    assert certificates.certificate_issue(domain_id=issuing.pk) is None

    assert key_endpoint.requests == []
    assert refused_with(issuing) == (
        f"The CA answered with a redirect to {key_endpoint.base}/certificate?server_name={HOST}; "
        "refused."
    )


def test_a_certificate_for_another_name_is_refused(issuing, fake_acme):
    fake_acme.misbehaviour = "other-name"

    assert certificates.certificate_issue(domain_id=issuing.pk) is None

    assert refused_with(issuing) == (
        f"The CA returned a certificate for {OTHER_NAME}, not {HOST}; refused."
    )


def test_the_refusal_reads_german_on_the_domain_page(issuing, fake_acme, alice):
    fake_acme.misbehaviour = "other-name"
    assert certificates.certificate_issue(domain_id=issuing.pk) is None
    refused_with(issuing)

    german = Client(HTTP_ACCEPT_LANGUAGE="de")
    german.force_login(alice)
    page = german.get(f"/dashboard/projects/shop/domains/{HOST}/").content.decode()
    text = visible_text(page)
    assert (
        f"Die Zertifizierungsstelle lieferte ein Zertifikat für {OTHER_NAME}, nicht für {HOST}; "
        "abgelehnt."
    ) in text
    assert not english_left(text, english_runs("de")), english_left(text, english_runs("de"))


def test_a_certificate_for_another_key_is_refused(issuing, fake_acme):
    fake_acme.misbehaviour = "other-key"

    assert certificates.certificate_issue(domain_id=issuing.pk) is None

    assert refused_with(issuing) == (
        f"The CA returned a certificate for {HOST} with another public key than the order's; "
        "refused."
    )


def test_an_expired_certificate_is_refused(issuing, fake_acme):
    fake_acme.misbehaviour = "expired"

    assert certificates.certificate_issue(domain_id=issuing.pk) is None

    message = refused_with(issuing)
    assert message.startswith(f"The CA returned a certificate for {HOST} that expired on ")
    assert message.endswith(" UTC; refused.")


def test_a_rate_limit_waits_for_the_cas_retry_after_and_counts_as_rate_limited(
    issuing, fake_acme, client, settings
):
    settings.METRICS_TOKEN = TOKEN

    def rate_limited() -> float:
        response = client.get(
            "/metrics", HTTP_HOST="10.0.0.7", HTTP_AUTHORIZATION=f"Bearer {TOKEN}"
        )
        return Scrape(response.content.decode()).value(
            "petstore_acme_errors_total", type="rateLimited"
        )

    before = rate_limited()
    fake_acme.misbehaviour = "rate-limited"

    with pytest.raises(pki.Pending) as waiting:
        certificates.certificate_issue(domain_id=issuing.pk)

    assert RATE_LIMIT_RETRY_AFTER - 5 < waiting.value.retry_after <= RATE_LIMIT_RETRY_AFTER
    assert Domain.objects.get(pk=issuing.pk).state == State.ISSUING
    # The series PetstoreAcmeRateLimited watches, there at 0 before the first one.
    assert rate_limited() == before + 1
