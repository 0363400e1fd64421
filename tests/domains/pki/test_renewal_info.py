"""Renewal when the CA says: a random point in the window its ACME Renewal Information
suggests (RFC 9773), when its directory offers `renewalInfo`; otherwise two thirds into the
certificate's validity, made earlier by a random part of it, so certificates issued together
do not renew together. The window is read again when the CA's Retry-After says (the hourly
renewal run), so a CA that moves it earlier, before it revokes, gets its renewals. Debian's
Pebble predates ARI: a front on loopback adds it (tests/domains/pki/acme_front.py)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from domains.models import Certificate
from domains.policy import RENEWAL_INFO_RETRY, RENEWAL_SPREAD, renewal_time
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from tests.fixtures.domains import TARGET

# Where the CA's window starts when a test's certificate is issued.
IN_TEN_DAYS = timedelta(days=10)


def issued_in_window(domain, acme_front) -> tuple[Certificate, datetime]:
    """The domain's certificate, issued while the CA suggests a day's window ten days from
    now; and that window's start."""
    start = datetime.now(UTC) + IN_TEN_DAYS
    acme_front.window = (start, start + timedelta(days=1))
    certificate = certificates.certificate_issue(domain_id=domain.pk)
    assert certificate is not None
    return certificate, start


@pytest.mark.acme
def test_a_certificate_is_renewed_in_the_window_the_ca_suggests(verified, acme_front):
    certificate, start = issued_in_window(verified, acme_front)

    assert start <= certificate.renew_after <= start + timedelta(days=1)
    # Asked for this certificate: its authority key id and serial (RFC 9773 §4.1).
    serial = int(certificate.serial, 16).to_bytes(20, "big").lstrip(b"\0")
    assert len(acme_front.renewal_asked) == 1
    asked_serial = acme_front.renewal_asked[0].split(".")[1].rstrip("=")
    assert asked_serial == base64.urlsafe_b64encode(serial).decode().rstrip("=")


@pytest.mark.acme
def test_a_window_the_ca_moves_earlier_brings_the_renewal_into_it(verified, acme_front):
    certificate, _ = issued_in_window(verified, acme_front)
    assert verified.pk not in certificates.certificates_due_for_renewal()

    now = datetime.now(UTC)
    acme_front.window = (now - timedelta(hours=1), now)  # the CA is about to revoke
    assert certificates.renewal_windows_refresh() == 1

    certificate.refresh_from_db()
    assert now - timedelta(hours=1) <= certificate.renew_after <= now
    assert verified.pk in certificates.certificates_due_for_renewal()
    # Asked again when the CA's Retry-After (6 hours) says, not before.
    assert certificate.renewal_info_at is not None
    assert timedelta(hours=5) < certificate.renewal_info_at - now <= timedelta(hours=6, minutes=1)
    assert certificates.renewal_windows_refresh() == 0


@pytest.mark.acme
def test_a_later_window_leaves_the_renewal_where_it_was(verified, acme_front):
    certificate, start = issued_in_window(verified, acme_front)
    planned = certificate.renew_after

    acme_front.window = (start + timedelta(days=20), start + timedelta(days=21))
    assert certificates.renewal_windows_refresh() == 1
    certificate.refresh_from_db()
    assert certificate.renew_after == planned


@pytest.mark.acme
def test_a_ca_that_cannot_be_reached_changes_no_renewal_and_is_asked_an_hour_later(
    verified, acme_front, settings, caplog
):
    certificate, _ = issued_in_window(verified, acme_front)
    planned = certificate.renew_after
    acme_front.stop()  # the CA that issued it: nothing listens there any more

    before = datetime.now(UTC)
    assert certificates.renewal_windows_refresh() == 1
    certificate.refresh_from_db()
    assert certificate.renew_after == planned
    assert certificate.renewal_info_at is not None
    assert certificate.renewal_info_at - before >= RENEWAL_INFO_RETRY
    assert "renewal window for www.example.test" in caplog.text


@pytest.mark.acme
def test_once_the_ca_stops_answering_the_rest_of_the_run_waits(
    verified, acme_front, shop, alice, dns_server
):
    """Each certificate would otherwise wait out a network timeout on the certificates
    worker, which issues every tenant's certificates."""
    dns_server.add("shop.example.test", "CNAME", TARGET + ".")
    other = domain_add(project=shop, hostname="shop.example.test", actor=alice)
    domain_check(domain_id=other.pk)
    issued_in_window(verified, acme_front)
    issued_in_window(other, acme_front)
    asked_before = len(acme_front.renewal_asked)
    acme_front.renewal_info_cut = True

    before = datetime.now(UTC)
    assert certificates.renewal_windows_refresh() == 2
    assert len(acme_front.renewal_asked) == asked_before + 1  # the second was not asked
    for certificate in Certificate.objects.filter(domain__in=[verified, other]):
        assert certificate.renewal_info_at is not None
        assert certificate.renewal_info_at - before >= RENEWAL_INFO_RETRY


def test_the_local_ca_is_never_asked_again(active):
    assert certificates.renewal_windows_refresh() == 1
    certificate = Certificate.objects.get(domain=active)
    assert certificate.renewal_info_at == certificate.not_after
    assert certificates.renewal_windows_refresh() == 0


@pytest.mark.acme
def test_without_renewal_information_two_thirds_of_the_validity_with_jitter(verified, acme_front):
    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None and acme_front.renewal_asked == []
    validity = certificate.not_after - certificate.not_before
    planned = certificate.not_before + validity * 2 / 3
    assert planned - validity * RENEWAL_SPREAD <= certificate.renew_after <= planned


def test_certificates_issued_together_are_not_renewed_together():
    not_before = datetime(2026, 11, 2, tzinfo=UTC)
    not_after = not_before + timedelta(days=90)
    times = [renewal_time(not_before, not_after) for _ in range(50)]
    assert all(
        not_before + timedelta(days=57) <= when <= not_before + timedelta(days=60) for when in times
    )
    assert len({when.replace(microsecond=0) for when in times}) > 40
    assert max(times) - min(times) > timedelta(days=1)
