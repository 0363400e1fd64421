"""The domain sweep benchmark's zone (bench/domains_sweep.py): N names, most pointing at the
platform's target, one in twenty of each failure, served by the loopback DNS server in a
process of its own."""

from __future__ import annotations

import contextlib
import multiprocessing
import os

from devtools.devdns import DNSServer

ZONE = "sweep-bench.test"
WRONG = "elsewhere.example.net."
# Domains checked first, unmeasured, so both runs measure warm worker processes (their
# database connections open, their first-task costs paid), not a cold start.
WARMUP = 200

# One in twenty of each failure; the rest verify (75 %).
MIX = {
    0: "wrong_target",
    1: "conflicting_record",  # an A record instead of the CNAME
    2: "conflicting_record",  # an A record beside the CNAME
    3: "nxdomain",
    4: "no_record",
}


def hostname(i: int) -> str:
    return f"d{i:06d}.{ZONE}"


def zone_server(n: int, target: str):
    server = DNSServer("127.0.0.1", 0)
    server.add(target, "A", "192.0.2.80")
    server.add(target, "AAAA", "2001:db8::80")
    for i in range(WARMUP):
        server.add(f"warm{i}.{ZONE}", "CNAME", target + ".")
    for i in range(n):
        name, kind = hostname(i), MIX.get(i % 20, "ok")
        if kind == "ok":
            server.add(name, "CNAME", target + ".")
        elif kind == "wrong_target":
            server.add(name, "CNAME", WRONG)
        elif i % 20 == 1:
            server.add(name, "A", "203.0.113.7")
        elif i % 20 == 2:
            server.add(name, "CNAME", target + ".")
            server.add(name, "A", "203.0.113.7")
        elif kind == "no_record":
            server.add(name, "TXT", '"owned"')
        # nxdomain: no records at all
    return server.start()


class DNSProcess:
    """The loopback DNS server in a process of its own (forked), so that its one answering
    thread shares no interpreter lock with this process's polling and sampling: with several
    workers' batches in flight, in this process it fell behind and checks timed out."""

    def __init__(self, n: int, target: str) -> None:
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        self.process = context.Process(target=self._serve, args=(n, target, theirs), daemon=True)
        self.process.start()
        self.address: str = ours.recv()
        self._conn = ours

    @staticmethod
    def _serve(n: int, target: str, conn) -> None:
        server = zone_server(n, target)
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
