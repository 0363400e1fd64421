"""Renewal when the CA says: a random point in the window its ACME Renewal Information
suggests (RFC 9773), when its directory offers `renewalInfo`; otherwise two thirds into the
certificate's validity, made earlier by a random part of it, so certificates issued together
do not renew together. Debian's Pebble predates ARI: a front on loopback adds it
(tests/domains/pki/acme_front.py)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from domains.policy import RENEWAL_SPREAD, renewal_time
from domains.services import certificates


@pytest.mark.acme
def test_a_certificate_is_renewed_in_the_window_the_ca_suggests(verified, acme_front):
    start = datetime.now(UTC) + timedelta(days=10)
    acme_front.window = (start, start + timedelta(days=1))

    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None
    assert start <= certificate.renew_after <= start + timedelta(days=1)
    # Asked for this certificate: its authority key id and serial (RFC 9773 §4.1).
    serial = int(certificate.serial, 16).to_bytes(20, "big").lstrip(b"\0")
    assert len(acme_front.renewal_asked) == 1
    asked_serial = acme_front.renewal_asked[0].split(".")[1].rstrip("=")
    assert asked_serial == base64.urlsafe_b64encode(serial).decode().rstrip("=")


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
