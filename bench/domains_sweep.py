"""The domain-checks sweep on a real Celery worker: 1,000 and 10,000 pending domains.

For each N it starts the loopback DNS server (devtools/devdns.py) on a free port with
records for N domains (most CNAME to the platform target; some point elsewhere, have
an A record instead of or beside the CNAME, exist without a CNAME or do not exist at
all, so the failure paths are measured too), replaces the previous run's bench project
with N pending domains that are due now, starts `celery -A petstore worker` (prefork,
concurrency 2 for 2 cores) pointed at that DNS server, triggers one sweep through the
broker and waits until every domain has a check result newer than the trigger.

Reported: elapsed time, time per domain, and the worker's peak RSS (the sum over the
worker's process tree, sampled every 50 ms with psutil). Called by bench/run.py with
its ENV; `python bench/domains_sweep.py [N ...]` runs it alone with the same ENV.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.environment import ENV, create_database, exclusive, migrate, setup_django  # noqa: E402
from bench.processes import (  # noqa: E402
    cpu_seconds,
    cpu_used,
    purge_queue,
    stop,
    tree,
    wait_for_worker,
)
from devtools.processes import spawn  # noqa: E402

SIZES = (1_000, 10_000)
SLUG = "sweep-bench"
ZONE = "sweep-bench.test"
CONCURRENCY = 2  # prefork children: one per core of the benchmark machine
WAIT_LIMIT = 600.0  # seconds; a run slower than this is reported as unfinished
TARGET = 15.0  # seconds for the larger sweep (docs/decisions/domain-sweep.md)
WRONG = "elsewhere.example.net."
# Domains checked first, unmeasured, so both runs measure warm worker processes (their
# database connections open, their first-task costs paid), not a cold start.
WARMUP = 200

# One in twenty of each failure; the rest verify (75 %).
MIX = {
    0: "wrong_target",
    1: "conflicting_record",  # an A record instead of the CNAME
    2: "conflicting_record",  # an A record beside the CNAME
    3: "nxdomain",
    4: "no_record",
}


@dataclass
class Run:
    n: int
    seconds: float
    done: int
    peak_rss: int
    idle_rss: int
    codes: dict[str, int]
    cpu: dict[str, float]

    @property
    def per_domain_ms(self) -> float:
        return self.seconds * 1000 / self.n


def hostname(i: int) -> str:
    return f"d{i:05d}.{ZONE}"


def _dns_server(n: int, target: str):
    from devtools.devdns import DNSServer

    server = DNSServer("127.0.0.1", 0)
    server.add(target, "A", "192.0.2.80")
    server.add(target, "AAAA", "2001:db8::80")
    for i in range(WARMUP):
        server.add(f"warm{i}.{ZONE}", "CNAME", target + ".")
    for i in range(n):
        name, kind = hostname(i), MIX.get(i % 20, "ok")
        if kind == "ok":
            server.add(name, "CNAME", target + ".")
        elif kind == "wrong_target":
            server.add(name, "CNAME", WRONG)
        elif i % 20 == 1:
            server.add(name, "A", "203.0.113.7")
        elif i % 20 == 2:
            server.add(name, "CNAME", target + ".")
            server.add(name, "A", "203.0.113.7")
        elif kind == "no_record":
            server.add(name, "TXT", '"owned"')
        # nxdomain: no records at all
    return server.start()


def _fresh_project(n: int):
    """The bench project (the previous run's removed) with N pending domains, not due yet,
    and WARMUP domains due now."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from domains.models import Domain, Project, ProvenHostname

    Project.objects.filter(slug=SLUG).delete()
    # The proofs earlier runs left would make every name contested (a TXT question more
    # per domain): the sweep is measured on a platform where nobody proved these names.
    ProvenHostname.objects.filter(registrable_domain=ZONE).delete()
    user, _ = get_user_model().objects.get_or_create(username=SLUG)
    project = Project.objects.create(slug=SLUG, owner=user, plan="pro", name=SLUG)
    now = timezone.now()
    Domain.objects.bulk_create(
        (Domain(project=project, hostname=hostname(i), window_started_at=now) for i in range(n)),
        batch_size=2000,
    )
    due = now - timedelta(seconds=1)
    Domain.objects.bulk_create(
        Domain(project=project, hostname=f"warm{i}.{ZONE}", next_check_at=due)
        for i in range(WARMUP)
    )
    return project


def _sweep_and_wait(domains, worker, log_path: Path) -> tuple[float, int]:
    """Trigger one sweep through the broker; wait until every one of `domains` is checked."""
    from django.utils import timezone

    from domains import tasks

    expected = domains.count()
    started_wall, started = timezone.now(), time.monotonic()
    tasks.sweep.delay()
    fresh = domains.filter(checked_at__gte=started_wall)
    done = 0
    while time.monotonic() - started < WAIT_LIMIT:
        done = fresh.count()
        if done >= expected:
            break
        if worker.poll() is not None:
            raise RuntimeError("worker died:\n" + log_path.read_text(errors="replace")[-3000:])
        time.sleep(0.1)
    return time.monotonic() - started, done


def _start_worker(env: dict, dns_address: str, log_path: Path) -> subprocess.Popen:
    worker_env = {
        **env,
        "DOMAINS_DNS_NAMESERVERS": dns_address,
        # Certificates are a separate flow; keep their (delayed) issuance out of the window.
        "DOMAINS_CERT_ISSUE_DELAY": "3600",
        "DOMAINS_CA_DIR": str(log_path.parent / "ca"),
    }
    command = [
        sys.executable, "-m", "celery", "-A", "petstore", "worker",
        "--pool", "prefork", "--concurrency", str(CONCURRENCY),
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        "--purge", "--loglevel", "WARNING", "-n", f"sweep-bench-{os.getpid()}@%h",
    ]  # fmt: skip
    return spawn(command, env=worker_env, log_path=log_path)


def _cpu_snapshot(worker: psutil.Process) -> dict[tuple[str, int], float]:
    """CPU seconds so far per process: the worker's tree, this process (the DNS server
    answers from its threads), PostgreSQL and Redis."""
    groups = [("worker", p) for p in tree(worker)]
    groups.append(("dns server (bench process)", psutil.Process()))
    for proc in psutil.process_iter(["name"]):
        name = proc.info["name"] or ""
        if name == "postgres" or name.startswith("redis"):
            groups.append((name.split("-")[0], proc))
    return cpu_seconds(groups)


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    for proc in tree(process):
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total


class RSSSampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                self.peak = max(self.peak, _tree_rss(self.process))
            except psutil.Error:
                return
            self._stop_event.wait(0.05)

    def stop(self) -> int:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)
        return self.peak


def measure(n: int, env: dict) -> Run:
    setup_django(env)
    from django.conf import settings
    from django.db.models import Count
    from django.utils import timezone

    from domains.models import Domain

    target = settings.PLATFORM_CNAME_TARGET
    server = _dns_server(n, target)
    workdir = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    log_path = workdir / "worker.log"
    worker = sampler = None
    try:
        project = _fresh_project(n)
        worker = _start_worker(env, server.address, log_path)
        wait_for_worker(worker, log_path)
        domains = Domain.objects.filter(project=project)
        _sweep_and_wait(domains.filter(hostname__startswith="warm"), worker, log_path)
        measured = domains.exclude(hostname__startswith="warm")
        measured.update(next_check_at=timezone.now() - timedelta(seconds=1))
        sampler = RSSSampler(worker.pid)
        idle_rss = _tree_rss(sampler.process)
        sampler.start()
        cpu_before = _cpu_snapshot(sampler.process)
        elapsed, done = _sweep_and_wait(measured, worker, log_path)
        peak = sampler.stop()
        cpu_after = _cpu_snapshot(sampler.process)
        cpu = cpu_used(cpu_before, cpu_after)
        codes = {
            row["check_code"]: row["c"]
            for row in measured.order_by().values("check_code").annotate(c=Count("pk"))
        }
        return Run(n, elapsed, done, peak, idle_rss, codes, cpu)
    finally:
        if sampler is not None:
            sampler.stop()
        if worker is not None:
            stop(worker)
            purge_queue()  # what the stopped worker handed back (delayed certificate batches)
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def rows_for(small: Run, large: Run) -> list[str]:
    ratio = large.per_domain_ms / small.per_domain_ms
    finished = large.done >= large.n and small.done >= small.n
    rss_ratio = large.peak_rss / small.peak_rss
    sizes = f"{small.n:,} vs {large.n:,}"

    def rss(run: Run) -> str:
        growth = (run.peak_rss - run.idle_rss) / 2**20
        return f"{_mb(run.peak_rss)} (idle {_mb(run.idle_rss)}, +{growth:.0f} MB)"

    return [
        f"| Domain sweep: cost per domain, {sizes} pending | "
        f"{small.per_domain_ms:.2f} ms/domain ({small.seconds:.1f} s) | "
        f"{large.per_domain_ms:.2f} ms/domain ({large.seconds:.1f} s) | {ratio:.2f} | ≤ 1.5x | "
        f"{'met' if ratio <= 1.5 and finished else 'MISSED'} |",
        f"| Domain sweep: {large.n:,} pending re-checked on the worker | limit {TARGET:.0f} s | "
        f"{large.seconds:.1f} s ({large.done:,} checked) | {large.seconds / TARGET:.2f} | "
        f"< {TARGET:.0f} s | "
        f"{'met' if large.seconds < TARGET and large.done >= large.n else 'MISSED'} |",
        f"| Domain sweep: worker peak RSS (process tree), {sizes} | {rss(small)} | "
        f"{rss(large)} | {rss_ratio:.2f} | flat (≤ 1.2x) | "
        f"{'met' if rss_ratio <= 1.2 else 'MISSED'} |",
    ]


def sweep_rows(env: dict, sizes: tuple[int, int] = SIZES) -> list[str]:
    with exclusive(env):
        return _sweep_rows(env, sizes)


def _sweep_rows(env: dict, sizes: tuple[int, ...]) -> list[str]:
    migrate(env)
    runs = []
    for n in sizes:
        run = measure(n, env)
        print(
            f"domains sweep: {n:,} domains in {run.seconds:.1f} s "
            f"({run.per_domain_ms:.2f} ms/domain), {run.done:,} checked, "
            f"peak RSS {_mb(run.peak_rss)} (idle {_mb(run.idle_rss)}), codes {run.codes}, "
            f"CPU s {', '.join(f'{k} {v:.1f}' for k, v in run.cpu.items())}",
            flush=True,
        )
        runs.append(run)
    return rows_for(*runs) if len(runs) == 2 else []


if __name__ == "__main__":
    create_database()
    sizes = tuple(int(arg) for arg in sys.argv[1:]) or SIZES
    for line in sweep_rows(ENV, sizes):
        print(line)
