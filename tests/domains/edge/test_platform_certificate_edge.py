"""The platform's wildcard certificate over real TLS: Caddy presents it for a project's default
address, and a replaced one from the endpoint's next beat, the same edge process throughout
(tests/fixtures/edge.py)."""

from __future__ import annotations

import pytest
from cryptography import x509

from tests.fixtures.domains import PLATFORM_DOMAIN
from tests.fixtures.edge import serial
from tests.fixtures.platformcertificate import store_platform_certificate

pytestmark = pytest.mark.django_db(transaction=True)

HOST = f"shop.{PLATFORM_DOMAIN}"


def serial_of(pem: str) -> str:
    return serial(x509.load_pem_x509_certificate(pem.encode()))


def test_the_edge_presents_the_platforms_wildcard_and_its_replacement_without_a_restart(edge):
    assert edge.presented(HOST) is None
    first = store_platform_certificate()
    edge.shows(HOST, serial_of(first))

    second = store_platform_certificate()

    edge.shows(HOST, serial_of(second))
    assert edge.process.poll() is None  # the same edge, never restarted
