"""The bench scripts' child processes (the web server, Celery, Caddy, Pebble), started and
stopped as the tests start them (devtools/processes.py), from Procfile.production's lines:
waiting until one answers, the Celery worker's queue, and the CPU time each process used."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import psutil

from devtools.processes import stop_group

ROOT = Path(__file__).resolve().parent.parent

# Seconds a process has to stop on SIGTERM before SIGKILL: a worker finishes its task first.
STOP_GRACE = 30.0


def procfile_lines() -> dict[str, str]:
    """Procfile.production's lines, by process name: the benchmarks run what production runs."""
    text = (ROOT / "Procfile.production").read_text()
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def stop(process: subprocess.Popen) -> None:
    stop_group(process, graceful=STOP_GRACE)


def wait_until(what: str, ready: Callable[[], object], process: subprocess.Popen,
               log_path: Path, timeout: float = 60.0) -> None:  # fmt: skip
    """Until `ready()` is true; an error with the end of its log if the process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited:\n" + log_path.read_text(errors="replace")[-3000:])
        if ready():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer within {timeout:.0f} s")


def wait_for_worker(process: subprocess.Popen, log_path: Path) -> None:
    """Until the Celery worker answers a ping through the broker (Django set up)."""
    from petstore.celery import app

    wait_until("worker", lambda: app.control.ping(timeout=0.5), process, log_path)


def purge_queue() -> None:
    """Drop what is left on the broker (what a stopped worker handed back)."""
    from petstore.celery import app

    app.control.purge()


def tree(process: psutil.Process) -> list[psutil.Process]:
    """The process and every process below it."""
    return [process, *process.children(recursive=True)]


def cpu_seconds(groups: Iterable[tuple[str, psutil.Process]]) -> dict[tuple[str, int], float]:
    """CPU seconds used so far by each (group, process); one that has ended is left out."""
    snapshot = {}
    for group, process in groups:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            snapshot[(group, process.pid)] = times.user + times.system
    return snapshot


def cpu_used(before: dict[tuple[str, int], float],
             after: dict[tuple[str, int], float]) -> dict[str, float]:  # fmt: skip
    """CPU seconds per group between two snapshots; a process started in between (a
    worker's database connection) counts whole, one that ended in between is missed."""
    used: dict[str, float] = {}
    for key, seconds in after.items():
        used[key[0]] = used.get(key[0], 0.0) + seconds - before.get(key, 0.0)
    return used
