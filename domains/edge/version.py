"""The edge version: a number the database raises whenever a certificate row (or the platform's
own, a PlatformKey row) is written or a domain is added, removed, renamed or changes state, by
whatever path (petstore/versions/ says how). While it stays the same, no handshake's answer has
changed but by the clock (a certificate expiring, which the endpoint's cache knows from
notAfter)."""

from __future__ import annotations

from petstore import versions

# Made by the migrations (domains 0010 made the table, 0011 and 0029 these triggers): a change
# here needs a migration that replaces them (`versions.superseding`).
EDGE = versions.Version(
    table="domains_edge_version",
    watches=[
        versions.Watch("domains_certificate", "INSERT OR UPDATE OR DELETE"),
        versions.Watch("domains_domain", "INSERT OR DELETE"),
        # Checks write a domain's row often (checked_at, next_check_at...): only its state
        # and its name decide what a handshake gets.
        versions.Watch("domains_domain", "UPDATE", columns=("state", "hostname")),
        # The platform's wildcard certificate (domains/services/platformcertificate.py).
        versions.Watch("domains_platformkey", "INSERT OR UPDATE OR DELETE"),
    ],
)


def current() -> int:
    """The number now (one indexed read of a one-row table)."""
    return EDGE.read().number


def missing_triggers() -> list[str]:
    """The version's triggers this database lacks or has disabled (by hand, or a migration
    that remade the domains or certificates table); empty when all are there."""
    return versions.missing_triggers(EDGE)
