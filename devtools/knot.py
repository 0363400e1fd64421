"""Knot DNS (Debian's `knotd`), a real authoritative server run as a process of our own, never
as a service: the tests' primary of the DNS-01 zone (tests/fixtures/knot.py) and the domain
sweep benchmark's zone (bench/sweepzone.py).

Everything it needs lives in one folder of the caller's (its configuration, the zone files,
its rundir, storage and log), it listens on one loopback port, and `start()` returns once
every zone answers its SOA authoritatively (a large zone loads after the server starts).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import dns.exception
import dns.flags
import dns.message
import dns.query
import dns.rcode

from devtools.sockets import free_port

KNOTD = "/usr/sbin/knotd"

CONFIG = """\
server:
    rundir: "{folder}"
    listen: 127.0.0.1@{port}
    udp-workers: {udp_workers}
    tcp-workers: 1
    background-workers: 1
database:
    storage: "{folder}"
{access}template:
  - id: default
    storage: "{folder}"
    zonefile-sync: -1
    journal-content: none
zone:
{zones}log:
  - target: "{folder}/knot.log"
    any: info
"""


@dataclass(frozen=True)
class Zone:
    """One zone Knot serves: its name, its records after the SOA (zone file lines, names
    relative to the zone or absolute), the SOA's primary name server, and the id of the
    configuration's `acl` that may update it (none: read-only)."""

    name: str
    records: str
    primary: str = "ns1"
    acl: str = ""

    def text(self) -> str:
        return (
            f"$ORIGIN {self.name}.\n$TTL 60\n@ SOA {self.primary} hostmaster 1 60 60 600 60\n"
            f"{self.records}"
        )


class KnotServer:
    """knotd on 127.0.0.1:`port` (a free one by default), serving zones from `folder`."""

    def __init__(self, folder: Path, port: int | None = None, *, udp_workers: int = 1) -> None:
        self.folder = folder
        self.port = port if port is not None else free_port()
        self.udp_workers = udp_workers
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def log(self) -> str:
        path = self.folder / "knot.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self, zones: Sequence[Zone], *, access: str = "", timeout: float = 15.0) -> None:
        """Write the zone files and the configuration (`access`: its `key` and `acl`
        sections, as YAML), run knotd, and wait until every zone is served."""
        entries = []
        for zone in zones:
            path = self.folder / f"{zone.name}.zone"
            path.write_text(zone.text())
            acl = f"    acl: {zone.acl}\n" if zone.acl else ""
            entries.append(f'  - domain: {zone.name}\n    file: "{path}"\n{acl}')
        config = self.folder / "knot.conf"
        config.write_text(
            CONFIG.format(
                folder=self.folder,
                port=self.port,
                udp_workers=self.udp_workers,
                access=access,
                zones="".join(entries),
            )
        )
        self.process = subprocess.Popen(  # noqa: S603 (Debian's knotd, our own config)
            [KNOTD, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        for zone in zones:
            while not self._serves(zone.name):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"knotd did not serve {zone.name}: " + self.log())
                time.sleep(0.05)

    def _serves(self, name: str) -> bool:
        try:
            response = dns.query.udp(
                dns.message.make_query(f"{name}.", "SOA"), "127.0.0.1", port=self.port, timeout=0.5
            )
        except (dns.exception.Timeout, OSError):
            return False
        return response.rcode() == dns.rcode.NOERROR and bool(response.flags & dns.flags.AA)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
