"""Suite-wide fixtures and the rule for tests that need a server.

Tests marked `needs_postgres` or `needs_redis` run against the real services.
On a bare machine (no DATABASE_URL / REDIS_URL) they are skipped with the
reason; with REQUIRE_SERVICES=1 (set by .ci/run) a missing service fails the
run instead, so CI can never go green by skipping.

The shared fixtures (personas, pets, the DNS server and projects, a real worker,
a browser) live in tests/fixtures/ and are registered once, below.
"""

from __future__ import annotations

import os

import pytest
from django.conf import settings

from devtools.pebble import PEBBLE

pytest_plugins = [
    "tests.fixtures.people",
    "tests.fixtures.pets",
    "tests.fixtures.domains",
    "tests.fixtures.worker",
    "tests.fixtures.browser",
    "tests.fixtures.pebble",
    "tests.fixtures.edge",
    "tests.fixtures.static",
]

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES", "").lower() in {"1", "true", "yes"}


def _postgres_missing() -> str | None:
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        return "needs PostgreSQL: set DATABASE_URL=postgres://..."
    return None


def _redis_missing() -> str | None:
    url = settings.REDIS_URL
    if not url:
        return "needs Redis: set REDIS_URL=redis://..."
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        return f"needs Redis at {url}: {exc}"
    return None


CHROMIUM = "/usr/bin/chromium"


def _chromium_missing() -> str | None:
    # Debian's `chromium` package; .ci/run installs it when it is missing.
    if not os.access(CHROMIUM, os.X_OK):
        return f"needs Chromium at {CHROMIUM}: apt-get install -y chromium"
    return None


def _pebble_missing() -> str | None:
    # Debian's `pebble` package (Let's Encrypt's test CA); .ci/run installs it when missing.
    if not os.access(PEBBLE, os.X_OK):
        return f"needs Pebble at {PEBBLE}: apt-get install -y pebble"
    return None


@pytest.fixture(autouse=True)
def plain_http(settings):
    """Tests speak plain HTTP to the app, through the test client and the live server alike;
    production's HTTPS redirect and secure cookies are tested on their own."""
    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    # Browsers refuse a __Host- cookie that is not Secure: the plain names, as in development.
    settings.SESSION_COOKIE_NAME = "sessionid"
    settings.CSRF_COOKIE_NAME = "csrftoken"


@pytest.fixture
def openapi_schema(db, settings):
    """The app's own OpenAPI document, loaded by schemathesis to call the app over WSGI."""
    import schemathesis
    from django.core.signals import request_finished, request_started
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections

    settings.ALLOWED_HOSTS = ["localhost"]  # schemathesis' WSGI client sends Host: localhost
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""  # test the API, not 429s
    # Like Django's test client: keep the test's connection (and its transaction)
    # open across requests instead of closing it at the end of each one.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        loaded = schemathesis.openapi.from_wsgi("/v1/openapi.json", get_wsgi_application())
        loaded.config.update(base_url="http://localhost/v1")
        yield loaded
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


_CHECKS = {
    "needs_postgres": _postgres_missing,
    "needs_redis": _redis_missing,
    "browser": _chromium_missing,
    "acme": _pebble_missing,
}


def pytest_sessionstart(session: pytest.Session) -> None:
    if REQUIRE_SERVICES:
        problems = [msg for check in _CHECKS.values() if (msg := check())]
        if problems:
            raise pytest.UsageError("REQUIRE_SERVICES=1 but: " + "; ".join(problems))


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, check in _CHECKS.items():
        if item.get_closest_marker(marker) and (reason := check()):
            if REQUIRE_SERVICES:
                pytest.fail(reason)
            pytest.skip(reason)
