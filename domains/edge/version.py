"""The edge version: a number the database raises whenever a certificate row is written or a
domain is added, removed, renamed or changes state (triggers, created by the migration
`edge_version`; petstore/versions.py says how). While it stays the same,
no handshake's answer has changed but by the clock (a certificate expiring, which the
endpoint's cache knows from notAfter)."""

from __future__ import annotations

from petstore import versions

TABLE = "domains_edge_version"

# What the migration creates; `missing_triggers` looks for them by name.
TRIGGERS = (
    "domains_edge_version_certificate",
    "domains_edge_version_domain",
    "domains_edge_version_domain_state",
    "domains_edge_version_certificate_truncate",
    "domains_edge_version_domain_truncate",
)


def current() -> int:
    """The version now (one indexed read of a one-row table)."""
    return versions.current(TABLE)


def missing_triggers() -> list[str]:
    """The version's triggers this database lacks (dropped by hand, or by a migration that
    remakes the domains or certificates table); empty when all are there."""
    return versions.missing_triggers(TRIGGERS)
