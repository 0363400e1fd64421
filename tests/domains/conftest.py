"""Fixtures of the domains engine: a real DNS server on loopback, personas, a real worker.

`dns_server` is a real authoritative DNS server (domains/devdns.py) on
127.0.0.1, UDP and TCP, on a random port; each test sets the records it needs
and the platform's resolver settings point at it. `celery_worker` (in
tests/domains/worker.py, re-exported here) runs `celery -A petstore worker`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from domains.devtools.devdns import DNSServer
from domains.services.projects import deploy_record, project_create
from tests.domains.worker import celery_worker  # noqa: F401

TARGET = "domains.petstore.localhost"
TARGET_ADDRESS = "192.0.2.80"
TARGET_ADDRESS6 = "2001:db8::80"
CA_ID = "ca.petstore.localhost"


@pytest.fixture(autouse=True)
def platform_settings(settings, tmp_path_factory):
    """The platform names the tests are written against, and a CA directory of their own."""
    settings.PLATFORM_DOMAIN = "petstore.localhost"
    settings.PLATFORM_CNAME_TARGET = TARGET
    settings.DOMAINS_CA_IDENTIFIER = CA_ID
    settings.DOMAINS_VERIFY_WINDOW = 48
    settings.DOMAINS_CA_DIR = tmp_path_factory.getbasetemp() / "domains-ca"
    # Nothing in these tests may reach the internet: an unset resolver points nowhere useful.
    settings.DOMAINS_DNS_NAMESERVERS = ["127.0.0.1:9"]
    settings.DOMAINS_DNS_TIMEOUT = 0.3
    settings.DOMAINS_DNS_LIFETIME = 0.6
    # Users are created in most tests; the production hasher is deliberately slow.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings


@pytest.fixture(scope="session")
def _dns_server_session():
    server = DNSServer("127.0.0.1", 0).start()
    yield server
    server.stop()


@pytest.fixture
def dns_server(_dns_server_session, platform_settings):
    """The loopback DNS server, emptied, with the platform's target name in it."""
    server = _dns_server_session
    server.clear()
    server.add(TARGET, "A", TARGET_ADDRESS)
    server.add(TARGET, "AAAA", TARGET_ADDRESS6)
    platform_settings.DOMAINS_DNS_NAMESERVERS = [server.address]
    yield server
    server.clear()


def run_at_once(call: Callable[[], Any], times: int) -> tuple[list[Any], list[Exception]]:
    """Call `call` in `times` threads released together by a barrier.

    Returns what the calls returned and the exceptions they raised; each thread
    closes its own database connection.
    """
    barrier, results, errors = threading.Barrier(times), [], []

    def run():
        try:
            barrier.wait()
            results.append(call())
        except Exception as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, errors


PASSWORD = "a long enough test password"


def make_user(username: str, **extra):
    return get_user_model().objects.create_user(username, password=PASSWORD, **extra)


@pytest.fixture
def alice(db):
    return make_user("alice")


@pytest.fixture
def bob(db):
    return make_user("bob")


@pytest.fixture
def shop(alice):
    """alice's Pro project with a successful deploy."""
    project = project_create(slug="shop", owner=alice, plan="pro", name="Shop")
    deploy_record(project=project, html="<h1>Alice's shop</h1>")
    return project


@pytest.fixture
def bobs(bob):
    project = project_create(slug="bobs", owner=bob, plan="business", name="Bob's")
    deploy_record(project=project, html="<h1>Bob's place</h1>")
    return project
