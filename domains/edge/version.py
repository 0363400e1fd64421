"""The edge version: a number the database raises whenever a certificate row is written or a
domain is added, removed, renamed or changes state (triggers, created by the migration
`edge_version`), so nothing that writes those rows can forget to. While it stays the same,
no handshake's answer has changed but by the clock (a certificate expiring, which the
endpoint's cache knows from notAfter)."""

from __future__ import annotations

from django.db import connection

TABLE = "domains_edge_version"

# What the migration creates, by vendor; `missing_triggers` looks for them by name.
TRIGGERS = {
    "postgresql": (
        "domains_edge_version_certificate",
        "domains_edge_version_domain",
        "domains_edge_version_domain_state",
        "domains_edge_version_certificate_truncate",
        "domains_edge_version_domain_truncate",
    ),
    "sqlite": (
        "domains_edge_version_certificate_insert",
        "domains_edge_version_certificate_update",
        "domains_edge_version_certificate_delete",
        "domains_edge_version_domain_insert",
        "domains_edge_version_domain_delete",
        "domains_edge_version_domain_state",
    ),
}
_FOUND = {
    "postgresql": "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal",
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'trigger'",
}


def current() -> int:
    """The version now (one indexed read of a one-row table)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT version FROM {TABLE} WHERE id = 1")  # noqa: S608 (a constant)
        row = cursor.fetchone()
    if row is None:
        raise LookupError(f"{TABLE} has no row: run `manage.py migrate`")
    return int(row[0])


def missing_triggers() -> list[str]:
    """The version's triggers this database lacks (on SQLite, a migration that remakes the
    domains or certificates table drops them); empty when all are there."""
    expected = TRIGGERS.get(connection.vendor, ())
    if not expected:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_FOUND[connection.vendor])
        found = {name for (name,) in cursor.fetchall()}
    return [name for name in expected if name not in found]
