"""The certificate endpoint keeping fewer names' certificates than are live
(EDGE_CACHED_CERTIFICATES), over real TLS: every handshake still gets its own name's."""

from __future__ import annotations

import pytest

from tests.fixtures.edge import serial

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def edge_environment() -> dict[str, str]:
    return {"EDGE_CACHED_CERTIFICATES": "1"}


def test_names_past_the_cache_are_each_served_their_own_certificate(edge, www_on_edge,
                                                                     bobs_on_edge):  # fmt: skip
    for _ in range(3):  # each handshake's name drops the other's answer
        for domain in (www_on_edge, bobs_on_edge):
            assert serial(edge.handshake(domain.hostname)) == domain.certificate.serial
