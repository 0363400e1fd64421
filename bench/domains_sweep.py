"""The domain-checks sweep on real checks workers: 1,000 / 10,000 / 100,000 pending domains.

For each size and each number of workers (1, 2, 4): the zone of bench/sweepzone.py served by
Knot DNS (`--zone-server devdns`: the development DNS server), the bench project with N
pending domains, Procfile.production's checks worker line K times pointed at that server, and
the sweep sent as beat sends it until every domain has a check result newer than the start.
The smallest size runs BASELINE_RUNS times and its median run is kept: every other size's cost
per domain is held to it. Then one sweep among 100,000 active domains with none due. Reported:
elapsed time, time per domain, the workers' and the database backends' peak RSS, the CPU of
the workers, the DNS server, PostgreSQL and Redis (bench/sweepfootprint.py), the database's
size. Called by bench/run.py with its ENV; `python -m bench.domains_sweep --help` runs it alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.environment import ENV, create_database, exclusive, migrate, setup_django  # noqa: E402
from bench.processes import cpu_used, procfile_lines, purge_queue, stop, wait_for_worker  # noqa: E402
from bench.sweepfootprint import (  # noqa: E402
    RSSSampler,
    cpu_snapshot,
    database_backends,
    database_size,
    load_average,
    tree_rss,
)
from bench.sweeprows import Idle, Run, mb, named_workers, rows_for  # noqa: E402
from bench.sweepzone import SERVERS, WARMUP, ZONE, hostname, zone_server  # noqa: E402
from devtools.processes import spawn  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
WORKERS = (1, 2, 4)
ACTIVE = 100_000
BASELINE_RUNS = 3  # of the smallest size, per number of workers: its median is kept
SLUG = "sweep-bench"
WAIT_LIMIT = 3600.0  # seconds; a run slower than this is reported as unfinished


def fresh_project(n: int, *, active: bool = False):
    """The bench project (the previous run's removed) with N pending domains, not due yet,
    and WARMUP domains due now; with `active`, N active domains next checked in a day."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from domains.choices import CertState, State
    from domains.models import Domain, Project, ProvenHostname

    Project.objects.filter(slug=SLUG).delete()
    # The proofs earlier runs left would make every name contested (a TXT question more
    # per domain): the sweep is measured on a platform where nobody proved these names.
    ProvenHostname.objects.filter(registrable_domain=ZONE).delete()
    user, _ = get_user_model().objects.get_or_create(username=SLUG)
    project = Project.objects.create(slug=SLUG, owner=user, plan="pro", name=SLUG)
    now = timezone.now()
    live = (
        {
            "state": State.ACTIVE,
            "cert_state": CertState.ISSUED,
            "check_code": "ok",
            "verified_at": now,
            "checked_at": now,
            "next_check_at": now + timedelta(days=1),
        }
        if active
        else {}
    )
    Domain.objects.bulk_create(
        (
            Domain(project=project, hostname=hostname(i), window_started_at=now, **live)
            for i in range(n)
        ),
        batch_size=2000,
    )
    due = now - timedelta(seconds=1)
    Domain.objects.bulk_create(
        Domain(project=project, hostname=f"warm{i}.{ZONE}", next_check_at=due)
        for i in range(WARMUP)
    )
    _vacuum()
    return project


def _vacuum() -> None:
    """VACUUM (ANALYZE) of the domains app's tables, as autovacuum keeps a production
    database. Without it the rows earlier runs deleted and updated stay in the tables and
    their indexes where autovacuum is off (the shared machine's PostgreSQL has it off): a
    batch's look-up of its 100 host names read every earlier run's dead versions of them
    (73 ms a batch after a dozen runs), and each run of a session was slower than the last."""
    from django.apps import apps
    from django.db import connection

    models = apps.get_app_config("domains").get_models(include_auto_created=True)
    tables = sorted({connection.ops.quote_name(model._meta.db_table) for model in models})
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM (ANALYZE) {', '.join(tables)}")


def _sweep_and_wait(
    domains, workers: list[subprocess.Popen], logs: list[Path]
) -> tuple[float, int]:
    """Trigger a sweep through the broker, and another every DOMAINS_SWEEP_INTERVAL as beat
    does; wait until every one of `domains` is checked."""
    from django.conf import settings
    from django.utils import timezone

    from domains import tasks

    expected = domains.count()
    started_wall, started = timezone.now(), time.monotonic()
    tasks.sweep.delay()
    next_sweep = started + settings.DOMAINS_SWEEP_INTERVAL
    fresh = domains.filter(checked_at__gte=started_wall)
    done = 0
    while time.monotonic() - started < WAIT_LIMIT:
        done = fresh.count()
        if done >= expected:
            break
        for worker, log_path in zip(workers, logs, strict=True):
            if worker.poll() is not None:
                raise RuntimeError("worker died:\n" + log_path.read_text(errors="replace")[-3000:])
        if time.monotonic() >= next_sweep:
            tasks.sweep.delay()
            next_sweep += settings.DOMAINS_SWEEP_INTERVAL
        # Each count reads every one of the N rows: at 100,000 a poll every 0.1 s took as
        # much of PostgreSQL's CPU as the sweep's own statements. A poll every 1 % of the
        # time so far keeps the measurement within 1 %.
        time.sleep(max(0.1, (time.monotonic() - started) / 100))
    return time.monotonic() - started, done


def _start_worker(env: dict, dns, log_path: Path, number: int) -> subprocess.Popen:
    """Procfile.production's checks worker, with a node name of its own, asking `dns` (the
    zone's server) as its resolver and as every zone's own name server."""
    worker_env = {
        **env,
        "DOMAINS_DNS_NAMESERVERS": dns.address,
        "DOMAINS_DNS_AUTHORITATIVE_PORT": str(dns.port),
        # Certificates are a separate flow; keep their (delayed) issuance out of the window.
        "DOMAINS_CERT_ISSUE_DELAY": "3600",
        "DOMAINS_CA_DIR": str(log_path.parent / "ca"),
    }
    command = procfile_lines()["worker"].split()
    assert command[:2] == ["celery", "-A"], command
    name = command.index("-n")
    command[name + 1] = f"sweep-bench-{os.getpid()}-{number}@%h"
    level = command.index("--loglevel")
    command[level + 1] = "WARNING"
    command = [sys.executable, "-m", *command, "--without-gossip", "--without-mingle"]
    return spawn(command, env=worker_env, log_path=log_path)


def measure(n: int, env: dict, workers: int = 1, zone_server_name: str = "knot") -> Run:
    setup_django(env)
    from django.conf import settings
    from django.db.models import Count
    from django.utils import timezone

    from domains.models import Domain

    workdir = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    target, dashboard = settings.PLATFORM_CNAME_TARGET, settings.DASHBOARD_HOST
    server = zone_server(zone_server_name, n, target, dashboard, workdir)
    logs = [workdir / f"worker-{i + 1}.log" for i in range(workers)]
    started: list[subprocess.Popen] = []
    sampler = None
    try:
        project = fresh_project(n)
        for number, log_path in enumerate(logs, start=1):
            started.append(_start_worker(env, server, log_path, number))
        for worker, log_path in zip(started, logs, strict=True):
            wait_for_worker(worker, log_path)
        domains = Domain.objects.filter(project=project)
        _sweep_and_wait(domains.filter(hostname__startswith="warm"), started, logs)
        measured = domains.exclude(hostname__startswith="warm")
        measured.update(next_check_at=timezone.now() - timedelta(seconds=1))
        processes = [psutil.Process(worker.pid) for worker in started]
        sampler = RSSSampler(processes, database_backends())
        idle_rss = tree_rss(processes)
        sampler.start()
        cpu_before = cpu_snapshot(processes, server.pid)
        elapsed, done = _sweep_and_wait(measured, started, logs)
        peak = sampler.stop()
        cpu_after = cpu_snapshot(processes, server.pid)
        cpu = cpu_used(cpu_before, cpu_after)
        codes = {
            row["check_code"]: row["c"]
            for row in measured.order_by().values("check_code").annotate(c=Count("pk"))
        }
        return Run(
            n, workers, elapsed, done, peak, idle_rss, codes, cpu, database_size(),
            sampler.db_peak,
        )  # fmt: skip
    finally:
        if sampler is not None:
            sampler.stop()
        for worker in started:
            stop(worker)
        if started:
            purge_queue()  # what the stopped workers handed back (delayed certificate batches)
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _runs_of(n: int, sizes: tuple[int, ...]) -> int:
    return BASELINE_RUNS if n == min(sizes) and len(sizes) > 1 else 1


def _measured(n: int, env: dict, k: int, server: str) -> Run:
    before = load_average()
    run = measure(n, env, k, server)
    print(
        f"domains sweep: {n:,} domains on {named_workers(k)} in {run.seconds:.1f} s "
        f"({run.per_domain_ms:.2f} ms/domain), {run.done:,} checked, "
        f"peak RSS {mb(run.peak_rss)} (idle {mb(run.idle_rss)}), "
        f"database {mb(run.db_size)}, its backends' peak RSS {mb(run.db_peak_rss)}, "
        f"codes {run.codes}, "
        f"CPU s {', '.join(f'{name} {v:.1f}' for name, v in run.cpu.items())}; "
        f"load average {before} / {load_average()}",
        flush=True,
    )
    return run


def measure_idle(n: int, env: dict) -> Idle:
    """One sweep among `n` active domains none of which is due: what the worker's sweep
    task runs (scheduling.sweep), timed in this process, its statements counted."""
    setup_django(env)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from domains.services import scheduling

    fresh_project(n, active=True)
    # The warm-up domains are due: a first sweep takes them, the measured one finds none.
    scheduling.sweep()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    with CaptureQueriesContext(connection) as queries:
        started = time.monotonic()
        steps = scheduling.sweep()
        seconds = time.monotonic() - started
    return Idle(n, seconds, len(queries), len(steps.checks))


def sweep_rows(
    env: dict,
    sizes: tuple[int, ...] = SIZES,
    workers: tuple[int, ...] = WORKERS,
    active: int | None = ACTIVE,
    zone_server_name: str = "knot",
) -> list[str]:
    with exclusive(env):
        return _sweep_rows(env, sizes, workers, active, zone_server_name)


def _sweep_rows(
    env: dict, sizes: tuple[int, ...], workers: tuple[int, ...], active: int | None, server: str
) -> list[str]:
    migrate(env)
    print(f"domains sweep: zone served by {server}", flush=True)
    runs = []
    for k in workers:
        for n in sizes:
            # The smallest size is what every other is held to, and one short run of it
            # varies by half from run to run (2.7 to 3.9 ms per domain on one machine, one
            # hour): its median of BASELINE_RUNS.
            tries = [_measured(n, env, k, server) for _ in range(_runs_of(n, sizes))]
            runs.append(sorted(tries, key=lambda run: run.seconds)[len(tries) // 2])
    idle = None
    if active:
        before = load_average()
        idle = measure_idle(active, env)
        print(
            f"domains sweep: one sweep among {active:,} active domains in "
            f"{idle.seconds * 1000:.0f} ms, {idle.statements} statements; "
            f"load average {before} / {load_average()}",
            flush=True,
        )
    return rows_for(runs, idle)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.domains_sweep",
        description="The domain sweep on real checks workers; prints bench/results.md's rows.",
    )
    parser.add_argument(
        "sizes", nargs="*", type=int, default=list(SIZES), help="pending domains per run (0: none)"
    )
    parser.add_argument(
        "--workers", nargs="+", type=int, default=list(WORKERS), help="checks workers per run"
    )
    parser.add_argument(
        "--active", type=int, default=ACTIVE, help="active domains for the idle sweep (0: none)"
    )
    parser.add_argument(
        "--zone-server", choices=SERVERS, default=SERVERS[0], help="the DNS server of the zone"
    )
    args = parser.parse_args()
    create_database()
    sizes = tuple(n for n in args.sizes if n > 0)
    rows = sweep_rows(ENV, sizes, tuple(args.workers), args.active or None, args.zone_server)
    for line in rows:
        print(line)


if __name__ == "__main__":
    main()
