"""What the domain sweep benchmark's processes cost (bench/domains_sweep.py): CPU seconds
and peak RSS of the workers, the DNS server, the database's backends and Redis, and the
database's size."""

from __future__ import annotations

import contextlib
import os
import threading

import psutil

from bench.processes import cpu_seconds, tree


def cpu_snapshot(workers: list[psutil.Process], dns: int) -> dict[tuple[str, int], float]:
    """CPU seconds so far per process: the workers' trees, the DNS server's process (`dns`:
    knotd, all its threads, or the development server's), the benchmark database's backends
    (not the other databases' of a shared machine) and Redis."""
    groups = [("workers", p) for worker in workers for p in tree(worker)]
    groups.append(("dns server", psutil.Process(dns)))
    groups += [("postgres (its backends)", proc) for proc in database_backends()]
    for proc in psutil.process_iter(["name"]):
        name = proc.info["name"] or ""
        if name.startswith("redis"):
            groups.append((name.split("-")[0], proc))
    return cpu_seconds(groups)


def tree_rss(processes: list[psutil.Process]) -> int:
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            for proc in tree(process):
                with contextlib.suppress(psutil.Error):
                    total += proc.memory_info().rss
    return total


def database_backends() -> list[psutil.Process]:
    """The PostgreSQL backends connected to the benchmark's database (the workers' and
    this process's), as the sampler finds them."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend'"
        )
        pids = [pid for (pid,) in cursor.fetchall()]
    found = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            found.append(psutil.Process(pid))
    return found


class RSSSampler(threading.Thread):
    """Peak RSS of the workers' process trees and, apart, of the database's backends (RSS
    counts the shared buffers each backend touched, so their sum overstates PostgreSQL's
    own memory: an upper bound)."""

    def __init__(self, workers: list[psutil.Process], backends: list[psutil.Process]) -> None:
        super().__init__(daemon=True)
        self.workers = workers
        self.backends = backends
        self.peak = 0
        self.db_peak = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, tree_rss(self.workers))
            self.db_peak = max(self.db_peak, tree_rss(self.backends))
            self._stop_event.wait(0.05)

    def stop(self) -> int:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)
        return self.peak


def database_size() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        (size,) = cursor.fetchone()
    return int(size)


def load_average() -> str:
    """The machine's 1, 5 and 15 minute load averages, as the results record them."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())
