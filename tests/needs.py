"""What a test may need from the machine, and whether it is there: PostgreSQL, Redis,
Chromium, Pebble. The markers (`needs_postgres`, `needs_redis`, `browser`, `acme`) and the
fixtures that start real processes ask the same questions here.

On a bare machine a test whose service is missing is skipped with the reason; with
REQUIRE_SERVICES=1 (set by .ci/run) it fails instead, so CI can never go green by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import redis
from django.conf import settings
from django.db import connection

from devtools.pebble import PEBBLE

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES", "").lower() in {"1", "true", "yes"}
CHROMIUM = "/usr/bin/chromium"


def postgres_missing() -> str | None:
    if connection.vendor != "postgresql":
        return "needs PostgreSQL: set DATABASE_URL=postgres://..."
    return None


def redis_missing() -> str | None:
    url = settings.REDIS_URL
    if not url:
        return "needs Redis: set REDIS_URL=redis://..."
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        return f"needs Redis at {url}: {exc}"
    return None


def chromium_missing() -> str | None:
    # Debian's `chromium` package; .ci/run installs it when it is missing.
    if not os.access(CHROMIUM, os.X_OK):
        return f"needs Chromium at {CHROMIUM}: apt-get install -y chromium"
    return None


def pebble_missing() -> str | None:
    # Debian's `pebble` package (Let's Encrypt's test CA); .ci/run installs it when missing.
    if not os.access(PEBBLE, os.X_OK):
        return f"needs Pebble at {PEBBLE}: apt-get install -y pebble"
    return None


# What each marker needs.
MISSING_BY_MARKER: dict[str, Callable[[], str | None]] = {
    "needs_postgres": postgres_missing,
    "needs_redis": redis_missing,
    "browser": chromium_missing,
    "acme": pebble_missing,
}


def require(*missing: Callable[[], str | None], what: str = "") -> None:
    """Skip the test when a service it needs is missing (fail it under REQUIRE_SERVICES),
    naming `what` needed it."""
    problems = [reason for check in missing if (reason := check())]
    if problems:
        reason = " ".join(filter(None, [what, "; ".join(problems)]))
        (pytest.fail if REQUIRE_SERVICES else pytest.skip)(reason)
