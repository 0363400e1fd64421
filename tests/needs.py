"""What a test may need from the machine that no wheel brings, and whether it is there:
Chromium, Pebble, promtool and systemd-analyze (Debian's packages). PostgreSQL and Redis are
always there: the run starts its own where the environment names none (tests/settings.py).
The markers (`browser`, `acme`) and the fixtures that start real processes ask the same
questions here.

On a bare machine a test whose program is missing is skipped with the reason; with
REQUIRE_SERVICES=1 (set by .ci/run) it fails instead, so CI can never go green by skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import pytest

from devtools.pebble import PEBBLE
from devtools.units import systemd_analyze

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES", "").lower() in {"1", "true", "yes"}
CHROMIUM = "/usr/bin/chromium"


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


def promtool_missing() -> str | None:
    # Debian's `prometheus` package brings it; .ci/run installs it when it is missing.
    if shutil.which("promtool") is None:
        return "needs promtool: apt-get install -y --no-install-recommends prometheus"
    return None


def systemd_analyze_missing() -> str | None:
    # Debian's `systemd` package (no running systemd needed); .ci/run installs it when missing.
    if systemd_analyze() is None:
        return "needs systemd-analyze: apt-get install -y systemd"
    return None


# What each marker needs.
MISSING_BY_MARKER: dict[str, Callable[[], str | None]] = {
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
