"""Fixtures of the fault tests: the engine's personas, loopback DNS server and real
worker (tests/domains/conftest.py), plus a hostile DNS server in front of it."""

from __future__ import annotations

import pytest

from tests.domains.conftest import (  # noqa: F401
    _dns_server_session,
    alice,
    dns_server,
    platform_settings,
    shop,
)
from tests.domains.worker import celery_worker  # noqa: F401
from tests.reliability.hostile_dns import HostileDNS


@pytest.fixture
def hostile_dns(dns_server, platform_settings):  # noqa: F811
    """A hostile server forwarding to `dns_server`; the platform's resolver asks it."""
    server = HostileDNS(dns_server.address).start()
    platform_settings.DOMAINS_DNS_NAMESERVERS = [server.address]
    try:
        yield server
    finally:
        server.stop()
