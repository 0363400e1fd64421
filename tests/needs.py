"""What a test may need from the machine that no wheel brings, and whether it is there:
Chromium, Pebble, Knot DNS, promtool, blackbox_exporter, systemd-analyze and systemd-nspawn with
the drill's root file system, pgBackRest with Debian's PostgreSQL 15 (Debian's packages).
PostgreSQL and Redis are always there: the run starts its own where the environment names
none (tests/settings.py).
The markers (`browser`, `acme`, `knot`) and the fixtures that start real processes ask the same
questions here.

On a bare machine a test whose program is missing is skipped with the reason; with
REQUIRE_SERVICES=1 (set by .ci/run) it fails instead, so CI can never go green by skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from devtools.knot import KNOTD
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


def knotd_missing() -> str | None:
    # Debian's `knot` package (an authoritative DNS server, run as a process of the test's own,
    # never as a service); .ci/run installs it when it is missing.
    if not os.access(KNOTD, os.X_OK):
        return f"needs Knot DNS at {KNOTD}: apt-get install -y knot"
    return None


def promtool_missing() -> str | None:
    # Debian's `prometheus` package brings it; .ci/run installs it when it is missing.
    if shutil.which("promtool") is None:
        return "needs promtool: apt-get install -y --no-install-recommends prometheus"
    return None


BLACKBOX_EXPORTER = "prometheus-blackbox-exporter"


def blackbox_exporter_missing() -> str | None:
    # Debian's `prometheus-blackbox-exporter` package; .ci/run installs it when it is missing.
    if shutil.which(BLACKBOX_EXPORTER) is None:
        return f"needs blackbox_exporter: apt-get install -y {BLACKBOX_EXPORTER}"
    return None


def systemd_analyze_missing() -> str | None:
    # Debian's `systemd` package (no running systemd needed); .ci/run installs it when missing.
    if systemd_analyze() is None:
        return "needs systemd-analyze: apt-get install -y systemd"
    return None


# The restore runbook's cluster: Debian 12's PostgreSQL, the major its pgBackRest (2.45) handles.
DEBIAN_POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")


def pgbackrest_missing() -> str | None:
    # Debian's `pgbackrest` and `postgresql-15` packages; .ci/run installs them when missing.
    if shutil.which("pgbackrest") is None:
        return "needs pgBackRest: apt-get install -y pgbackrest"
    if not os.access(DEBIAN_POSTGRES_BIN / "initdb", os.X_OK):
        return f"needs PostgreSQL 15 at {DEBIAN_POSTGRES_BIN}: apt-get install -y postgresql-15"
    return None


# .ci/systemd-drill-image makes it (Debian 12 by debootstrap, with PostgreSQL and Redis).
SYSTEMD_DRILL_ROOT = Path(os.environ.get("SYSTEMD_DRILL_ROOT", "/var/lib/machines/petstore-drill"))


def systemd_drill_missing() -> str | None:
    # Debian's `systemd-container` (systemd-nspawn) and the drill's root file system.
    if shutil.which("systemd-nspawn") is None or shutil.which("nsenter") is None:
        return "needs systemd-nspawn: apt-get install -y systemd-container"
    if not (SYSTEMD_DRILL_ROOT / "etc" / "petstore" / "drill-image").exists():
        return f"needs the drill's root at {SYSTEMD_DRILL_ROOT}: .ci/systemd-drill-image"
    return None


# What each marker needs.
MISSING_BY_MARKER: dict[str, Callable[[], str | None]] = {
    "browser": chromium_missing,
    "acme": pebble_missing,
    "knot": knotd_missing,
    "systemd": systemd_drill_missing,
}


def require(*missing: Callable[[], str | None], what: str = "") -> None:
    """Skip the test when a service it needs is missing (fail it under REQUIRE_SERVICES),
    naming `what` needed it."""
    problems = [reason for check in missing if (reason := check())]
    if problems:
        reason = " ".join(filter(None, [what, "; ".join(problems)]))
        (pytest.fail if REQUIRE_SERVICES else pytest.skip)(reason)
