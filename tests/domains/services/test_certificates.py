"""Certificates: a real X.509 certificate from the local CA, after a CAA check; renewal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from domains import pki, tasks
from domains.choices import CertState, PlatformKeyUse, State
from domains.models import Certificate, Domain, DomainEvent, PlatformKey
from domains.pki import sealing
from domains.policy import CERT_LATE_AT_CHECK, cert_lost_at_sweep
from domains.services import certificates, scheduling
from domains.services.custom_domains import domain_add, domain_request_check
from domains.services.verification import domain_check
from tests.fixtures import commits
from tests.fixtures.domains import TARGET, in_step, run_at_once

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(dns_server, shop, alice, django_capture_on_commit_callbacks) -> list[Callable[[], Any]]:
    """What verifying www.example.test queued to run on commit (none of it runs)."""
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        tasks.enqueue(domain_check(domain_id=domain.pk).next_steps)
    return callbacks


@pytest.fixture
def verified(queued) -> Domain:
    """www.example.test, verified: the certificate is requested (issuing)."""
    return Domain.objects.get(hostname="www.example.test")


def test_verification_requests_the_certificate_after_the_configured_delay(
    verified, queued, settings
):
    assert verified.state == State.ISSUING
    assert verified.cert_state == CertState.REQUESTED
    # issue_certificate.apply_async(countdown=...) on commit
    assert len(commits.queued(queued)) == 1


def test_issuing_makes_a_real_certificate_for_the_host_name(verified):
    certificate = certificates.certificate_issue(domain_id=verified.pk)
    assert certificate is not None
    verified.refresh_from_db()
    assert verified.state == State.ACTIVE
    assert verified.cert_state == CertState.ISSUED
    assert verified.certificate == certificate
    cert = x509.load_pem_x509_certificate(certificate.pem.encode())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["www.example.test"]
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == timedelta(days=90)
    assert format(cert.serial_number, "x") == certificate.serial
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.digital_signature and not usage.key_cert_sign and not usage.crl_sign
    # Signed by the platform's local CA.
    _, ca_cert = pki.load_or_create_ca()
    assert cert.issuer == ca_cert.subject
    cert.verify_directly_issued_by(ca_cert)
    assert DomainEvent.objects.filter(domain=verified, action="certificate_issued").exists()


def test_issuing_twice_makes_one_certificate(verified):
    first = certificates.certificate_issue(domain_id=verified.pk)
    second = certificates.certificate_issue(domain_id=verified.pk)
    tasks.issue_certificate.apply(args=(verified.pk,))  # the task itself, a third time
    assert first == second
    assert Certificate.objects.filter(domain=verified).count() == 1


def test_caa_blocking_the_platform_ca_stops_issuance_with_the_reason(verified, dns_server):
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    assert certificates.certificate_issue(domain_id=verified.pk) is None
    verified.refresh_from_db()
    assert verified.state == State.VERIFIED
    assert verified.cert_state == CertState.BLOCKED
    assert verified.cert_code == "caa_blocked"
    assert 'example.test CAA 0 issue "letsencrypt.org"' in verified.cert_message
    assert not Certificate.objects.exists()


def test_reverify_after_fixing_caa_requests_the_certificate_again(
    verified, dns_server, alice, django_capture_on_commit_callbacks
):
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    certificates.certificate_issue(domain_id=verified.pk)
    dns_server.remove("example.test", "CAA")
    with django_capture_on_commit_callbacks(execute=False):
        domain_request_check(domain=Domain.objects.get(pk=verified.pk), actor=alice)
        domain_check(domain_id=verified.pk)
    verified.refresh_from_db()
    assert verified.state == State.ISSUING
    assert certificates.certificate_issue(domain_id=verified.pk) is not None


def test_caa_timeout_is_retried_not_read_as_permission(verified, dns_server):
    dns_server.blackhole("www.example.test")
    with pytest.raises(certificates.TemporaryDNSError):
        certificates.certificate_issue(domain_id=verified.pk)
    verified.refresh_from_db()
    assert verified.state == State.ISSUING


def test_renewal_replaces_a_certificate_30_days_before_expiry(verified):
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None
    assert certificates.certificates_due_for_renewal() == []
    assert certificates.certificate_renew(domain_id=verified.pk) is None
    with time_machine.travel(first.not_after - timedelta(days=30), tick=False):
        assert certificates.certificates_due_for_renewal() == [verified.pk]
        # Renewal needs a passing check within the last day: the scheduled re-check.
        domain_check(domain_id=verified.pk)
        renewed = certificates.certificate_renew(domain_id=verified.pk)
        assert renewed is not None and renewed.not_after == first.not_after + timedelta(days=60)
        assert certificates.certificate_renew(domain_id=verified.pk) is None  # idempotent
        assert Domain.objects.get(pk=verified.pk).certificate == renewed
    assert Certificate.objects.filter(domain=verified).count() == 2


def test_the_latest_certificate_says_when_to_renew_not_an_older_one(verified):
    """An older certificate's later renewal time (one reissued early, say) holds nothing
    back once the latest's has come (the CA moved its window earlier)."""
    latest = certificates.certificate_issue(domain_id=verified.pk)
    assert latest is not None
    older = Certificate.objects.create(
        domain=verified, serial="0ld", not_before=latest.not_before,
        not_after=latest.not_after - timedelta(days=1), san=latest.san, pem=latest.pem,
        key_pem=latest.key_pem, renew_after=latest.not_after,
    )  # fmt: skip
    assert certificates.certificates_due_for_renewal() == []
    Certificate.objects.filter(pk=latest.pk).update(renew_after=latest.not_before)
    assert older.renew_after > latest.not_before
    assert certificates.certificates_due_for_renewal() == [verified.pk]


def test_an_active_domain_without_a_certificate_is_due_for_renewal(
    verified, django_assert_num_queries
):
    assert certificates.certificates_due_for_renewal() == []  # issuing, not active
    Domain.objects.filter(pk=verified.pk).update(**in_step(State.ACTIVE))
    with django_assert_num_queries(1):
        assert certificates.certificates_due_for_renewal() == [verified.pk]


def test_the_ca_is_created_once_even_when_many_ask_at_the_same_time(settings, tmp_path):
    settings.DOMAINS_CA_DIR = tmp_path / "fresh-ca"

    def ask():
        key, cert = pki.load_or_create_ca()
        return cert.serial_number, key.public_key().public_numbers()

    subjects, errors = run_at_once(ask, 6)
    assert errors == []
    assert len(subjects) == 6
    assert len(set(s for s, _ in subjects)) == 1
    assert len({str(n) for _, n in subjects}) == 1
    key, cert = pki.load_or_create_ca()
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign
    # In the database, sealed like every private key the platform keeps; none on a disk.
    stored = PlatformKey.objects.get(use=PlatformKeyUse.LOCAL_CA)
    assert "PRIVATE KEY" not in stored.key_pem and sealing.is_sealed(stored.key_pem)
    # The folder holds only a copy of the CA's certificate, for clients to trust.
    assert [path.name for path in (tmp_path / "fresh-ca").iterdir()] == ["ca-cert.pem"]
    assert (tmp_path / "fresh-ca" / "ca-cert.pem").read_text() == stored.certificate_pem


def test_sweep_requeues_a_certificate_whose_task_was_lost(verified, settings):
    settings.DOMAINS_CERT_ISSUE_DELAY = 5
    later = datetime.now(UTC) + timedelta(minutes=6)
    with time_machine.travel(later, tick=False):
        queued = scheduling.sweep()
    assert verified.pk in queued.issue_now
    assert scheduling.sweep().issue_now == []  # claimed: not queued twice


def test_reverify_while_the_certificate_is_late_queues_issuance_again(
    verified, alice, django_capture_on_commit_callbacks
):
    with time_machine.travel(datetime.now(UTC) + timedelta(minutes=30), tick=False):
        domain_request_check(domain=verified, actor=alice)
        assert domain_check(domain_id=verified.pk).next_steps.issue_now == [verified.pk]
        # Just claimed again: not overdue again yet.
        assert domain_check(domain_id=verified.pk).next_steps.issue_now == []
    assert certificates.certificate_issue(domain_id=verified.pk) is not None


def test_certificate_work_is_late_after_a_minute_for_a_check_and_five_for_the_sweep():
    """Two rules (docs/decisions/domains.md): the owner's Re-verify asks again sooner than
    the unattended sweep takes a request for lost."""
    late = (CERT_LATE_AT_CHECK, cert_lost_at_sweep())
    assert late == (timedelta(minutes=1), timedelta(minutes=5))


def test_a_run_that_starts_takes_the_sweeps_claim_again(verified, dns_server):
    """Work under way, however long its batch waited in the queue, is not taken for lost:
    the run that starts on a domain claims it anew."""
    overdue = certificates.certificate_overdue(cert_lost_at_sweep())
    started = verified.cert_requested_at + overdue - timedelta(seconds=1)
    dns_server.blackhole("www.example.test")  # CAA times out: the run ends still issuing
    with (
        time_machine.travel(started, tick=False),
        pytest.raises(certificates.TemporaryDNSError),
    ):
        certificates.certificate_issue(domain_id=verified.pk)
    with time_machine.travel(started + overdue - timedelta(seconds=1), tick=False):
        assert scheduling.sweep().issue_now == []
    with time_machine.travel(started + overdue, tick=False):
        assert scheduling.sweep().issue_now == [verified.pk]


def test_a_passing_check_claims_late_work_from_the_issue_delay_plus_a_minute(verified, settings):
    overdue = timedelta(seconds=settings.DOMAINS_CERT_ISSUE_DELAY) + CERT_LATE_AT_CHECK
    with time_machine.travel(
        verified.cert_requested_at + overdue - timedelta(seconds=1), tick=False
    ):
        assert domain_check(domain_id=verified.pk).next_steps.issue_now == []
    with time_machine.travel(verified.cert_requested_at + overdue, tick=False):
        assert domain_check(domain_id=verified.pk).next_steps.issue_now == [verified.pk]


def test_the_sweep_claims_lost_work_from_the_issue_delay_plus_five_minutes(verified, settings):
    overdue = timedelta(seconds=settings.DOMAINS_CERT_ISSUE_DELAY) + cert_lost_at_sweep()
    with time_machine.travel(
        verified.cert_requested_at + overdue - timedelta(seconds=1), tick=False
    ):
        assert scheduling.sweep().issue_now == []
    with time_machine.travel(verified.cert_requested_at + overdue, tick=False):
        assert scheduling.sweep().issue_now == [verified.pk]
        assert scheduling.sweep().issue_now == []  # claimed: not queued twice


def test_a_domain_whose_dns_left_is_not_renewed(verified, dns_server):
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None
    with time_machine.travel(first.not_after - timedelta(days=30), tick=False):
        dns_server.remove("www.example.test")
        domain_check(domain_id=verified.pk)  # fails: still served, within its grace period
        assert Domain.objects.get(pk=verified.pk).state == State.ACTIVE
        assert certificates.certificate_renew(domain_id=verified.pk) is None
        stored = Domain.objects.get(pk=verified.pk)
        assert stored.cert_message.startswith("Not renewed:")
    assert Certificate.objects.filter(domain=verified).count() == 1


def test_a_domain_last_checked_over_a_day_ago_is_not_renewed(verified):
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None
    with time_machine.travel(first.not_after - timedelta(days=30), tick=False):
        assert certificates.certificate_renew(domain_id=verified.pk) is None
    assert Certificate.objects.filter(domain=verified).count() == 1
