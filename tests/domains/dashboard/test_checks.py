"""What the owner sees after a check: failures in plain words, the certificate, troubleshooting.

The DNS answers come from the engine's real loopback DNS server (`dns_server`).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from domains.choices import CertCode, CertState, State
from domains.models import Domain
from domains.services import certificates
from domains.services.verification import domain_check
from tests.fixtures.domains import TARGET

D = "/dashboard/projects/shop/domains/www.example.test/"


def test_conflicting_a_record_is_explained_on_the_list_and_the_page(alice_client, www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("www.example.test", "A", "192.0.2.10")
    domain_check(domain_id=www.pk)

    listing = alice_client.get("/dashboard/projects/shop/domains/").content.decode()
    assert "conflicting record beside the CNAME: A 192.0.2.10" in listing
    assert "ago" in listing  # when it was last checked

    page = alice_client.get(D).content.decode()
    assert "What is wrong:" in page
    assert "www.example.test has a conflicting record beside the CNAME: A 192.0.2.10" in page
    assert "Delete it" in page
    assert f"CNAME {TARGET}; A 192.0.2.10" in page  # found
    assert "Fix the record at your DNS provider, then choose Verify." in page
    assert "Check failed" in page  # the history


def test_wrong_cname_target_says_what_it_must_be(alice_client, www, dns_server):
    dns_server.add("www.example.test", "CNAME", "old-host.example.net.")
    domain_check(domain_id=www.pk)
    page = alice_client.get(D).content.decode()
    assert f"The CNAME points to old-host.example.net; it must be {TARGET}" in page


def test_verified_domain_waits_for_its_certificate_then_shows_it(alice_client, www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain_check(domain_id=www.pk)

    page = alice_client.get(D).content.decode()
    assert ">Certificate issuing<" in page
    assert "Not issued yet" in page
    assert "The DNS record is correct." in page
    assert alice_client.get(D + "status.json").json()["live"] is True

    certificate = certificates.certificate_issue(domain_id=www.pk)
    assert certificate is not None
    page = alice_client.get(D).content.decode()
    assert ">Active<" in page
    assert f"expires <strong>{certificate.not_after:%Y-%m-%d}</strong>" in page
    assert certificate.serial in page
    status = alice_client.get(D + "status.json").json()
    assert status["certificate"]["serial"] == certificate.serial
    assert status["live"] is False  # nothing left to wait for
    assert ">Re-verify</button>" in page


def test_no_certificate_after_30_minutes_shows_the_three_steps_with_results(
    alice_client, www, dns_server, time_machine
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    domain_check(domain_id=www.pk)  # verified; the certificate is still to come
    certificates.certificate_issue(domain_id=www.pk)  # the worker's CA meets the CAA record
    dns_server.clear()  # the page shows what the checks stored; it asks the DNS nothing

    time_machine.move_to(timezone.now() + timedelta(minutes=29))
    assert 'id="troubleshooting"' not in alice_client.get(D).content.decode()

    time_machine.move_to(timezone.now() + timedelta(minutes=2))
    page = alice_client.get(D).content.decode()
    steps = page[page.index('id="troubleshooting"') :]
    assert "No certificate 30 minutes after verification." in steps
    assert "Confirm the domain still verifies" in steps
    assert '<span class="result-ok">yes</span>' in steps
    assert '<span class="result-fail">they block it</span>' in steps
    assert "does not allow the platform&#x27;s certificate authority" in steps
    assert ">Re-verify</button>" in steps


def test_certificate_blocked_by_caa_says_what_to_change(alice_client, www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    domain_check(domain_id=www.pk)
    assert certificates.certificate_issue(domain_id=www.pk) is None

    page = alice_client.get(D).content.decode()
    certificate = page[page.index('id="certificate"') : page.index('id="dns"')]
    assert "does not allow the platform&#x27;s certificate authority" in certificate
    assert "then choose Re-verify" in certificate
    assert "the certificate authority may not issue its certificate" in page
    assert "Waiting for the certificate" not in page
    assert alice_client.get(D + "status.json").json()["live"] is False


def test_a_refused_order_is_a_troubleshooting_step_with_the_cas_reason(
    alice_client, www, dns_server, time_machine
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain_check(domain_id=www.pk)
    reason = 'The CA refused the order: "Fetching http://www.example.test/.well-known/…: 404"'
    # What a refused ACME order leaves on the domain (tests/domains/pki/test_acme.py).
    Domain.objects.filter(pk=www.pk).update(
        state=State.VERIFIED,
        cert_state=CertState.BLOCKED,
        cert_code=CertCode.CA_REFUSED,
        cert_message=reason,
    )
    time_machine.move_to(timezone.now() + timedelta(minutes=31))

    page = alice_client.get(D).content.decode()
    steps = page[page.index('id="troubleshooting"') :]
    assert "Check whether the CA refused the order:" in steps
    assert '<span class="result-fail">it did</span>' in steps
    assert "The CA refused the order: &quot;Fetching http://www.example.test/" in steps
    assert '<span class="result-ok">not blocked</span>' in steps  # CAA is not the reason
    certificate = page[page.index('id="certificate"') : page.index('id="troubleshooting"')]
    assert "Make sure the domain answers here" in certificate
