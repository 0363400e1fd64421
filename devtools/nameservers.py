"""A zone's name servers on loopback: several development DNS servers (devtools/devdns.py)
on one port, each on an address of its own (127.0.0.2, 127.0.0.3, …), each with its own
records or zone files, and any of them silent (it reads every query and answers none, a
lame delegation).

The domain doctor asks each of a zone's name servers directly, on one port
(DOMAINS_DNS_AUTHORITATIVE_PORT); this is how the tests and `manage.py devdns --also`
give it servers that disagree. Linux routes all of 127.0.0.0/8 to the loopback interface;
elsewhere add the addresses to it first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from devtools.devdns import DNSServer
from devtools.sockets import ATTEMPTS, PortInUseError


class NameServers:
    """One DNSServer per address, all on one port: `zone_dirs` maps an address to the
    directory of zone files it serves (None: records the caller adds), `silent` lists
    the addresses that never answer. Port 0 picks a port free on every address."""

    def __init__(
        self,
        zone_dirs: Mapping[str, Path | None],
        *,
        silent: Iterable[str] = (),
        port: int = 0,
    ) -> None:
        wanted = [(address, zone_dir, False) for address, zone_dir in zone_dirs.items()]
        wanted += [(address, None, True) for address in silent]
        if not wanted:
            raise ValueError("no address to serve")
        for _ in range(ATTEMPTS if port == 0 else 1):
            servers: dict[str, DNSServer] = {}
            try:
                for address, zone_dir, quiet in wanted:
                    # The first one picks the port (with 0); the others must have the same.
                    chosen = next(iter(servers.values())).port if servers else port
                    servers[address] = DNSServer(address, chosen, zone_dir=zone_dir, silent=quiet)
            except PortInUseError:
                for server in servers.values():  # bound, never started: closed, not stopped
                    server.udp.server_close()
                    server.tcp.server_close()
                if port:
                    raise
                continue
            self.servers = servers
            self.port = next(iter(servers.values())).port
            return
        raise PortInUseError(f"no port was free on every one of {', '.join(a for a, *_ in wanted)}")

    def __getitem__(self, address: str) -> DNSServer:
        return self.servers[address]

    def start(self) -> NameServers:
        for server in self.servers.values():
            if server.zone_dir is not None:
                server.reload_zones()
            server.start()
        return self

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()
