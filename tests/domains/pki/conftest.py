"""What the ACME tests share: a domain verified and issuing, whose name Pebble resolves to the
live server that answers its HTTP-01 challenges."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from domains.choices import State
from domains.services.custom_domains import domain_add
from domains.services.fallback import RESTING_KEY
from domains.services.verification import domain_check
from tests.domains.pki.acme_front import AcmeFront
from tests.fixtures.domains import TARGET


@pytest.fixture(autouse=True)
def retry_after_forgotten(settings):
    """A CA's Retry-After outlives the test in Redis, and a later test's CA (a front, a fake)
    may listen on the same port, and so have the same directory."""
    yield
    for directory in settings.DOMAINS_ACME_DIRECTORIES:
        cache.delete(RESTING_KEY.format(directory))


@pytest.fixture
def verified(pebble, dns_server, shop, alice):
    """www.example.test verified, pointing (through the platform's target) at 127.0.0.1,
    where the live server that Pebble validates against runs."""
    dns_server.remove(TARGET)
    dns_server.add(TARGET, "A", "127.0.0.1")
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    domain_check(domain_id=domain.pk)
    domain.refresh_from_db()
    assert domain.state == State.ISSUING
    return domain


@pytest.fixture
def acme_front(pebble, settings, _pebble_tls):
    """Pebble behind a front of the test's own (tests/domains/pki/acme_front.py): the
    platform's ACME directory is the front's."""
    ca_file, cert_file, key_file = _pebble_tls
    front = AcmeFront(pebble.directory.removesuffix("/dir"), ca_file, cert_file, key_file)
    front.start()
    settings.DOMAINS_ACME_DIRECTORIES = [front.directory]
    try:
        yield front
    finally:
        front.stop()
