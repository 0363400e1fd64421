"""DNS-01 (RFC 8555 §8.4): a TXT record at `_acme-challenge.<name>`, written by a DNS provider,
and the wait until every authoritative server of its zone serves it.

A provider (`Provider`) does what only the zone's operator can: `present` adds one TXT value at
a name, beside any value already there (a wildcard and its base name share one record name,
with one value each), and `clean` removes that value and no other. The built-in one is RFC 2136
dynamic update signed with TSIG (domains/dns/rfc2136.py); another is one module with the same
two methods. The wait is the platform's, the same for every provider (`wait_served`): a CA asks
any one of the zone's servers, so each of them, read from the zone's NS records and asked
directly (domains/dns/lookups.py), must answer with the value; it stops at a deadline, naming
the servers that still did not, never waits forever.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Protocol

from domains.dns import lookups

PREFIX = "_acme-challenge"
# Seconds between two rounds of questions to the zone's servers.
POLL_INTERVAL = 0.5


class ProviderError(Exception):
    """A provider could not write or remove a record: its message names the server and what
    it answered, never a credential."""


class NotServed(ProviderError):
    """The deadline passed before every authoritative server of the zone served the record."""


class Provider(Protocol):
    # The zone the provider writes in; its NS records name the servers waited for.
    zone: str

    def present(self, name: str, value: str) -> None: ...

    def clean(self, name: str, value: str) -> None: ...


def record_name(hostname: str) -> str:
    """Where the TXT record for `hostname` lives: a wildcard's is its base name's."""
    return f"{PREFIX}.{hostname.removeprefix('*.')}"


def authoritative_addresses(zone: str) -> dict[str, tuple[str, ...]]:
    """The zone's name servers (its NS records, through the platform's resolver), each with
    its addresses; a server whose addresses do not resolve has none."""
    servers = lookups.lookup(zone, "NS")
    if servers.status != lookups.OK or not servers.values:
        raise ProviderError(f"The zone {zone} has no NS records to wait for: {servers.status}")
    names = sorted(value.rstrip(".") for value in servers.values)
    found = lookups.lookup_many([(name, kind) for name in names for kind in ("A", "AAAA")])
    return {
        name: tuple(
            address
            for kind in ("A", "AAAA")
            if found[(name, kind)].status == lookups.OK
            for address in found[(name, kind)].values
        )
        for name in names
    }


def wait_served(zone: str, name: str, values: Collection[str], *, deadline: float) -> None:
    """Return once every address of every authoritative server of `zone` answers `name`'s TXT
    with each of `values`; `NotServed` at `deadline` (time.monotonic()), naming those that
    do not."""
    wanted = {f'"{value}"' for value in values}
    servers = authoritative_addresses(zone)
    lagging = [f"{server} (no address)" for server, addresses in servers.items() if not addresses]
    if lagging:
        raise NotServed(f"Some name servers of {zone} have no address: {', '.join(lagging)}")
    waiting = {(server, address) for server, addresses in servers.items() for address in addresses}
    while True:
        answers = lookups.lookup_many([(name, "TXT", address) for _, address in waiting])
        waiting = {
            (server, address)
            for server, address in waiting
            if not wanted <= set(answers[(name, "TXT", address)].values)
        }
        if not waiting:
            return
        if time.monotonic() + POLL_INTERVAL >= deadline:
            shown = ", ".join(f"{server} ({address})" for server, address in sorted(waiting))
            raise NotServed(
                f"The TXT record {name} was not served by every name server of {zone} in time: "
                f"{shown} did not have it."
            )
        time.sleep(POLL_INTERVAL)
