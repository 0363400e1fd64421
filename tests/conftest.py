"""Suite-wide fixtures and the rule for tests that need a server.

Every test has a real PostgreSQL and Redis: the machine's where the environment
names them (.ci/run), else the run's own from their wheels (tests/settings.py).
Tests marked `browser` or `acme` need a Debian package; on a bare machine they
are skipped with the reason; with REQUIRE_SERVICES=1 (set by .ci/run) a missing
one fails each test that needs it, so CI can never go green by skipping (tests/needs.py).

The shared fixtures (personas, pets, the DNS server and projects, a real worker,
a browser) live in tests/fixtures/ and are registered once, below.
"""

from __future__ import annotations

import pytest
from django.utils import translation

from tests.needs import MISSING_BY_MARKER, require

pytest_plugins = [
    "tests.fixtures.people",
    "tests.fixtures.pets",
    "tests.fixtures.domains",
    "tests.fixtures.nameservers",
    "tests.fixtures.worker",
    "tests.fixtures.browser",
    "tests.fixtures.pebble",
    "tests.fixtures.knot",
    "tests.fixtures.dns01",
    "tests.fixtures.edge",
    "tests.fixtures.static",
    "tests.fixtures.smtp",
    "tests.fixtures.webhooks",
    "tests.fixtures.members",
]


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
    settings.LANGUAGE_COOKIE_SECURE = False
    settings.LANGUAGE_COOKIE_NAME = "language"


@pytest.fixture(autouse=True)
def platform_language():
    """Each test starts and ends in the platform's language: a German page's request leaves
    German active in its thread (LocaleMiddleware activates it, nothing deactivates it),
    where the next test's own calls (a sentence it expects, a service it calls) would read it."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def refused_keys_unlimited(settings):
    """Tests send refused keys from one address all through the suite: they see 401s, not
    the refused-key limit, which its own tests turn on (tests/petstore/api/test_throttles.py)."""
    settings.API_FAILED_KEY_RATE_LIMIT = ""


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


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Per test, so a marker `-m` deselected (`make test` leaves the systemd drill to `make
    # drill`) needs nothing; under REQUIRE_SERVICES a missing program fails the test.
    for marker, check in MISSING_BY_MARKER.items():
        if item.get_closest_marker(marker):
            require(check)
