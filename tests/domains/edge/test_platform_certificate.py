"""The platform's own wildcard certificate at the certificate endpoint: served for
PLATFORM_DOMAIN and the names one label under it, replaced from the next beat of the edge
version when the row is written again (no edge restart), and left to the operator's own
certificate (EDGE_PLATFORM_CERTIFICATE) when there is one. Its issuance over DNS-01 is
tests/domains/pki/test_dns01.py's."""

from __future__ import annotations

import math

import pytest

from domains.edge.cache import CertificateCache
from domains.edge.endpoint import Endpoint
from domains.edge.paths import SECRET_FILE
from tests.domains.edge.test_certificate_cache import SECRET, handshake
from tests.fixtures.domains import PLATFORM_DOMAIN
from tests.fixtures.platformcertificate import store_platform_certificate

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def edge_secret(settings, tmp_path) -> None:
    settings.EDGE_DIR = tmp_path
    (tmp_path / SECRET_FILE).write_text(SECRET)


@pytest.fixture
def endpoint() -> Endpoint:
    return Endpoint(CertificateCache(fresh_for=math.inf), polling=False)


def served(endpoint: Endpoint, name: str) -> str | None:
    status, body = handshake(endpoint, name)
    return body.decode() if status == "200 OK" else None


def test_the_platform_certificate_serves_its_names_and_its_replacement_from_the_next_beat(
    endpoint,
):
    first = store_platform_certificate()
    for name in (f"shop.{PLATFORM_DOMAIN}", PLATFORM_DOMAIN):
        answer = served(endpoint, name)
        assert answer is not None and answer.startswith(first.strip())
        assert "PRIVATE KEY" in answer
    # A wildcard covers one label; other names are not the platform's.
    assert served(endpoint, f"a.shop.{PLATFORM_DOMAIN}") is None
    assert served(endpoint, "stranger.example.test") is None

    second = store_platform_certificate()
    # Until the beat: what the version watcher has not read yet.
    assert (served(endpoint, f"shop.{PLATFORM_DOMAIN}") or "").startswith(first.strip())
    endpoint.cache.refresh()
    assert (served(endpoint, f"shop.{PLATFORM_DOMAIN}") or "").startswith(second.strip())


def test_the_operators_own_certificate_is_left_to_serve_the_platforms_names(endpoint, settings):
    settings.EDGE_PLATFORM_CERTIFICATE = "/etc/petstore/platform.pem"
    store_platform_certificate()
    assert served(endpoint, f"shop.{PLATFORM_DOMAIN}") is None
