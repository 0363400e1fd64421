"""The fault tests' own fixture: a hostile DNS server in front of the loopback one."""

from __future__ import annotations

import pytest

from tests.reliability.hostile_dns import HostileDNS


@pytest.fixture
def hostile_dns(dns_server, platform_settings):
    """A hostile server forwarding to `dns_server`; the platform's resolver asks it."""
    server = HostileDNS(dns_server.address).start()
    platform_settings.DOMAINS_DNS_NAMESERVERS = [server.address]
    try:
        yield server
    finally:
        server.stop()
