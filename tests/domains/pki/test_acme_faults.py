"""Faults on the way to an ACME certificate that are ours or the CA's, never the owner's:
a CA slow to sign holds no lock a check needs; a challenge the CA could not fetch because
our edge was down is retried until it passes, with no owner action."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from domains.choices import State
from domains.models import Certificate, Domain
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check_many
from tests.fixtures.domains import TARGET

pytestmark = pytest.mark.acme

# How long the front holds the finalize request: the CA signing slowly.
SIGNING = 5.0


def test_an_issuance_in_progress_does_not_delay_a_check_batch_with_its_domain(
    verified, acme_front, dns_server, shop, alice
):
    dns_server.add("shop.example.test", "CNAME", TARGET + ".")
    other = domain_add(project=shop, hostname="shop.example.test", actor=alice)
    acme_front.finalize_delay = SIGNING
    outcome: list[object] = []

    def issue() -> None:
        try:
            outcome.append(certificates.certificate_issue(domain_id=verified.pk))
        finally:
            connection.close()

    issuing = threading.Thread(target=issue)
    issuing.start()
    assert acme_front.finalizing.wait(30), "the order was never finalized"

    started = time.monotonic()
    recorded = domain_check_many(domain_ids=[verified.pk, other.pk])
    took = time.monotonic() - started

    assert {domain.pk for domain in recorded.domains} == {verified.pk, other.pk}
    assert took < SIGNING / 2, f"the check batch waited {took:.1f} s for the CA"
    issuing.join(60)
    assert isinstance(outcome[0], Certificate)  # the slow CA signed; the result is stored
    assert Domain.objects.get(pk=verified.pk).state == State.ACTIVE
