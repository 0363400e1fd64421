"""The domain sweep benchmark's zone (bench/domains_sweep.py): N names, most pointing at the
platform's target, one in twenty of each failure, and the platform's own names (the target,
the dashboard's host) the checks ask for too.

Served by Knot DNS (devtools/knot.py), an authoritative server in C with a thread per core,
as production's workers ask real servers; `devdns` serves the same records from the
development DNS server (devtools/devdns.py, Python) in a process of its own, which with
several workers fell behind and timed checks out: it measured itself, not the sweep.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

from devtools.devdns import DNSServer
from devtools.knot import KnotServer, Zone

ZONE = "sweep-bench.test"
WRONG = "elsewhere.example.net."
# Domains checked first, unmeasured, so both runs measure warm worker processes (their
# database connections open, their first-task costs paid), not a cold start.
WARMUP = 200
# The zone's name server, without an address: the doctor asks the resolver for the zone's NS
# and its address, as for every pending domain, but no server directly (docs/decisions/
# domains.md, "The domain doctor": what asking one costs).
NAMESERVER = f"ns1.{ZONE}"
SERVERS = ("knot", "devdns")

# One in twenty of each failure; the rest verify (75 %). An A record beside the CNAME is
# not a zone Knot serves as written (it loads it and answers the CNAME alone): the second
# conflicting record is an AAAA instead of the CNAME, asked the same questions.
MIX = {
    0: "wrong_target",
    1: "conflicting_record",  # an A record instead of the CNAME
    2: "conflicting_record",  # an AAAA record instead of the CNAME
    3: "nxdomain",
    4: "no_record",
}

Record = tuple[str, str, str]  # owner (absolute, no final dot), type, value


def hostname(i: int) -> str:
    return f"d{i:06d}.{ZONE}"


def zones(n: int, target: str, dashboard: str) -> dict[str, Iterator[Record]]:
    """Each zone's records: ZONE's, and a zone at each of the platform's own names (the
    doctor asks their addresses once per batch) answering with an address."""
    own = {target: ("192.0.2.80", "2001:db8::80"), dashboard: ("127.0.0.1", "::1")}
    served = {ZONE: _sweep_records(n, target)}
    for name, (v4, v6) in own.items():
        if name:
            served[name] = iter([(name, "A", v4), (name, "AAAA", v6)])
    return served


def _sweep_records(n: int, target: str) -> Iterator[Record]:
    # The zone's NS record is each server's own: Knot's zone file names NAMESERVER, and the
    # development server gives each zone it makes `ns1.<zone>`, the same name.
    for i in range(WARMUP):
        yield f"warm{i}.{ZONE}", "CNAME", target + "."
    for i in range(n):
        name, kind = hostname(i), MIX.get(i % 20, "ok")
        if kind == "ok":
            yield name, "CNAME", target + "."
        elif kind == "wrong_target":
            yield name, "CNAME", WRONG
        elif i % 20 == 1:
            yield name, "A", "203.0.113.7"
        elif i % 20 == 2:
            yield name, "AAAA", "2001:db8::7"
        elif kind == "no_record":
            yield name, "TXT", '"owned"'
        # nxdomain: no records at all


class KnotZone:
    """The zone served by knotd, one UDP thread per core, from `folder`."""

    def __init__(self, n: int, target: str, dashboard: str, folder: Path) -> None:
        self.server = KnotServer(folder, udp_workers=os.cpu_count() or 1)
        served = [
            Zone(name, f"@ NS {NAMESERVER}.\n" + "".join(f"{o}. {t} {v}\n" for o, t, v in records))
            for name, records in zones(n, target, dashboard).items()
        ]
        # A few seconds per 100,000 names to load.
        self.server.start(served, timeout=60 + n / 1000)
        self.address, self.port, self.pid = self.server.address, self.server.port, self.server.pid

    def stop(self) -> None:
        self.server.stop()


class DNSProcess:
    """The development DNS server in a process of its own (forked), so that its one answering
    thread shares no interpreter lock with this process's polling and sampling."""

    def __init__(self, n: int, target: str, dashboard: str) -> None:
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        self.process = context.Process(
            target=self._serve, args=(n, target, dashboard, theirs), daemon=True
        )
        self.process.start()
        self.address: str = ours.recv()
        self.port = int(self.address.rsplit(":", 1)[1])
        self._conn = ours

    @staticmethod
    def _serve(n: int, target: str, dashboard: str, conn) -> None:
        server = DNSServer("127.0.0.1", 0)
        for records in zones(n, target, dashboard).values():
            for owner, rdtype, value in records:
                server.add(owner, rdtype, value)
        server.start()
        conn.send(server.address)
        conn.recv()  # until stop()
        server.stop()
        # Leave at once: the connections this process inherited belong to the parent.
        os._exit(0)

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send("stop")
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


def zone_server(server: str, n: int, target: str, dashboard: str, folder: Path):
    """The zone served by `server` (one of SERVERS), started."""
    if server == "devdns":
        return DNSProcess(n, target, dashboard)
    return KnotZone(n, target, dashboard, folder)
