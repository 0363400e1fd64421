"""The edge's own floor, and the edge's processes pinned apart from the web's.

The floor is the same Caddy binary in the same configuration as the edge's
(domains/edge/caddy.py's `config`, on a port of its own), proxying to the same web
processes, but holding the one certificate the benchmark asks for in its own
configuration (`tls.certificates.load_files`), with no endpoint and no thread keeping
anything in step. Against plain HTTP the edge pays for TLS and for Caddy's proxying
too; against the floor, only for what the edge does differently: where its
certificates come from (held, loaded through the admin API by domains/edge/heldcertificates.py, or
asked of the certificate endpoint during a full handshake).

Pinning: the edge's processes (both Caddys and the certificate endpoint) on some of
the machine's cores, the web processes on the others, every thread of each (as
`taskset -a -p` does), so that neither side takes the other's core while they
alternate; PostgreSQL and wrk stay unpinned.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import psutil
from django.test import override_settings

from bench.edge.platform import FLOOR, Platform
from bench.processes import tree, wait_until
from devtools.processes import spawn
from devtools.sockets import free_port, tcp_port_open
from domains.edge import caddy
from domains.edge.certificates import served_certificate
from domains.edge.processes import caddy_binary, caddy_command, caddy_env
from domains.pki import sealing


def floor_config(platform: Platform, port: int, certificate: Path, key: Path) -> dict:
    """The edge's configuration on `port`, its certificates from the two files."""
    with override_settings(
        HTTPS_PORT=port,
        EDGE_HTTP=False,
        EDGE_UPSTREAMS=[f"127.0.0.1:{platform.web_port}"],
        EDGE_ADMIN=f"unix/{platform.workdir / 'floor-admin.sock'}",
        EDGE_PLATFORM_CERTIFICATE="",
    ):
        config = caddy.config(data_dir=platform.workdir / "floor-data", secret="unused")
    config["apps"]["tls"] = {
        "certificates": {"load_files": [{"certificate": str(certificate), "key": str(key)}]}
    }
    return config


def start_floor(platform: Platform, hostname: str) -> int:
    """The floor serving `hostname` with the certificate the edge serves for it; its port."""
    served = served_certificate(hostname)
    if served is None:
        raise SystemExit(f"edge: no certificate served for {hostname}")
    folder = platform.workdir / FLOOR
    folder.mkdir(mode=0o700)
    certificate, key = folder / "certificate.pem", folder / "key.pem"
    certificate.write_text(served.pem)
    key.touch(mode=0o600)
    key.write_text(sealing.unseal(served.key_pem))
    port = free_port()
    config = folder / "caddy.json"
    config.touch(mode=0o600)
    config.write_text(json.dumps(floor_config(platform, port, certificate, key)))
    caddy_binary()  # says what is missing rather than a bare failure to start
    process = spawn(caddy_command(config), env=caddy_env(folder), log_path=platform.log_path(FLOOR))
    platform.processes[FLOOR] = process
    wait_until(FLOOR, lambda: tcp_port_open(port), process, platform.log_path(FLOOR))
    return port


def split_cores() -> tuple[set[int], set[int]] | None:
    """(the edge's cores, the web's): the last half of this process's cores for the edge,
    the rest for the web; None with a single core."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return None
    middle = len(cores) - len(cores) // 2
    return set(cores[middle:]), set(cores[:middle])


def _set_affinity(processes: list[psutil.Process], cores: set[int]) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            for thread in process.threads():
                with contextlib.suppress(OSError):  # a thread that has just ended
                    os.sched_setaffinity(thread.id, cores)


@contextlib.contextmanager
def pinned(platform: Platform, edge_cores: set[int], web_cores: set[int]) -> Iterator[None]:
    """The edge's processes (the edge's tree and the floor) on `edge_cores`, the web's tree
    on `web_cores`; every core for both again afterwards."""
    edge = tree(psutil.Process(platform.processes["edge"].pid))
    edge += tree(psutil.Process(platform.processes[FLOOR].pid))
    web = tree(psutil.Process(platform.processes["web"].pid))
    _set_affinity(edge, edge_cores)
    _set_affinity(web, web_cores)
    try:
        yield
    finally:
        every = os.sched_getaffinity(0)
        _set_affinity(edge + web, every)
