"""The fault tests' own fixtures: a hostile DNS server in front of the loopback one, and a
Redis server of the test's own (the run's shared one is never stopped)."""

from __future__ import annotations

import pytest

from tests.processes import OwnRedis
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


@pytest.fixture
def own_redis(settings, tmp_path):
    """The test's own Redis: cache on db 0, broker on db 1, for every process it starts
    (and for this process's cache and Celery app, through the settings)."""
    server = OwnRedis(tmp_path).start()
    settings.REDIS_URL, settings.CELERY_BROKER_URL = server.url(0), server.url(1)
    try:
        yield server
    finally:
        server.kill()
