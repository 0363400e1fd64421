"""The bench scripts' child processes (gunicorn, Celery, Caddy, Pebble): each in a session
of its own, so that stopping it also stops the workers it forked."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def spawn(command: list[str], *, env: dict, log_path: Path) -> subprocess.Popen:
    """Run `command` from the repository root, its output (both streams) to `log_path`."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def terminate(process: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM to the process's group; SIGKILL if it has not ended within `timeout` seconds."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def wait_for_worker(process: subprocess.Popen, log_path: Path, timeout: float = 60) -> None:
    """Until the Celery worker answers a ping through the broker (Django set up)."""
    from petstore.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("worker exited:\n" + log_path.read_text(errors="replace")[-3000:])
        if app.control.ping(timeout=0.5):
            return
    raise RuntimeError(f"worker not ready after {timeout:.0f} s")


def purge_queue() -> None:
    """Drop what is left on the broker (what a stopped worker handed back)."""
    from petstore.celery import app

    app.control.purge()
