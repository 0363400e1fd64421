"""The child processes of the tests and the benchmarks (the web server, Celery, Caddy, Pebble,
redis-server): each the leader of a session of its own, so that stopping its group also
stops the workers it forked, whatever they were doing."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def spawn(command: Sequence[str], *, env: Mapping[str, str], log_path: Path) -> subprocess.Popen:
    """Run `command` from the repository root in a new session, its output (both streams)
    to `log_path`."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(  # noqa: S603 (the callers' own commands)
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def stop_group(process: subprocess.Popen, *, graceful: float = 10.0) -> None:
    """SIGTERM to the process's group; SIGKILL if it has not ended within `graceful`
    seconds."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=graceful)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
