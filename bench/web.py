"""The web process under test: Procfile.production's web line with the benchmark's settings,
started as a process manager starts it, beside the FastAPI peer, with the CPU its process tree
and its database backends use."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from bench import servers
from bench.environment import ENV
from bench.processes import cpu_seconds, procfile_lines, stop, tree
from bench.servers import database_backends, start

PORT = int(os.environ.get("BENCH_PORT", "8077"))
BASE = f"http://127.0.0.1:{PORT}"
PEER_PORT = PORT + 1
PEER = f"http://127.0.0.1:{PEER_PORT}"
# The web process as production starts it (Procfile.production's `web` line) with the
# benchmark's settings and production's worker count (petstore/webserver.py: WEB_CONCURRENCY,
# cores + 1 unless set; BENCH_WORKERS sets it here). The FastAPI peer gets as many processes.
# The server table (bench/servers.py) measures 2 x cores + 1 and cores + 1.
BENCH_WORKERS = os.environ.get("BENCH_WORKERS")
WEB_LINE = procfile_lines()["web"]


def server_env() -> dict[str, str]:
    return {
        **ENV, "PORT": str(PORT), "PEER_POOL": servers.PEER_POOL,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **({"WEB_CONCURRENCY": BENCH_WORKERS} if BENCH_WORKERS else {}),
    }  # fmt: skip


def production_workers(**extra: str) -> int:
    """The worker count production's launcher reads from this environment (and `extra`),
    asked of the launcher's own configuration in a process of its own: the settings read
    WEB_CONCURRENCY when they load."""
    ask = (
        "import django; django.setup(); from petstore.webserver import WebServerConfig; "
        "print(WebServerConfig.from_settings().workers)"
    )
    out = subprocess.run(
        [sys.executable, "-c", ask], cwd=servers.ROOT, env={**server_env(), **extra},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(out.stdout.split()[-1])


def listens(process: psutil.Process, port: int) -> bool:
    """Whether the process has a socket listening on `port`."""
    try:
        return any(
            c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
            for c in process.net_connections("tcp")
        )
    except psutil.Error:
        return False


def start_server(**extra: str) -> tuple[subprocess.Popen, int]:
    """Procfile.production's web line, as a process manager runs it, on PORT (or `extra`'s),
    once every worker listens; with their number (what the peer is given)."""
    expected = production_workers(**extra)
    env = {**server_env(), **extra}
    port = int(env["PORT"])
    proc = start(["/bin/sh", "-c", "exec " + WEB_LINE], port, env, "/healthz")
    for _ in range(600):  # each worker listens once it has loaded the app
        listening = [p for p in tree(psutil.Process(proc.pid))[1:] if listens(p, port)]
        if len(listening) == expected:
            return proc, expected
        time.sleep(0.1)
    stop(proc)
    raise SystemExit(f"{len(listening)} workers listen, not {expected}: {WEB_LINE}")


def cpu_counter(server: subprocess.Popen, *, database: bool = True) -> Callable[[], float]:
    """CPU seconds used so far by the server's process tree and (unless `database` is False)
    the benchmark database's PostgreSQL backends (only the server under load keeps them
    busy)."""
    root = psutil.Process(server.pid)

    def used() -> float:
        backends = database_backends() if database else []
        return sum(cpu_seconds(("", p) for p in tree(root) + backends).values())

    return used
