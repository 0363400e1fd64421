"""Where a sweep batch's time goes, in one process: `verification.domain_check_many` (what a
checks worker's `check_domains` task runs) on batches of 100 of the domain sweep benchmark's
pending domains, against its zone in Knot DNS (bench/sweepzone.py), one batch after another.

Reported: this process's CPU and wall time per domain (the Python: the check's DNS through
dnspython, the decisions, the doctor, the recording through the ORM), the share of both spent
asking and deciding (`diagnosis.verify_many`), the statements per batch with their wall time,
and with `--profile` the functions that cost the most CPU (cProfile). Knot answers from its
own threads; on two cores it and PostgreSQL take CPU beside this process, as beside a worker.
With `--threads K` the batches run on K threads of this process, as a checks worker's pool
runs them (Procfile.production: 16), and the check codes are counted (a `dns_timeout` is a
batch that did not get the interpreter in time); the statements are not.
Runs on the benchmark's database (`bench`, or BENCH_DB).

    .venv/bin/python -m bench.sweep_profile [--domains 2000] [--profile] [--threads 16]
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import os
import pstats
import re
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from bench.domains_sweep import fresh_project
from bench.environment import ENV, create_database, exclusive, migrate, setup_django
from bench.sweepfootprint import load_average
from bench.sweepzone import KnotZone


def profile(n: int, *, with_profile: bool, threads: int = 0) -> str:
    from django.conf import settings
    from django.db import connection

    from domains.dns import diagnosis
    from domains.models import Domain
    from domains.services import verification
    from domains.services.scheduling import BATCH_SIZE, chunked

    folder = Path(tempfile.mkdtemp(prefix="sweep-profile-"))
    zone = KnotZone(n, settings.PLATFORM_CNAME_TARGET, settings.DASHBOARD_HOST, folder)
    settings.DOMAINS_DNS_NAMESERVERS = [zone.address]
    settings.DOMAINS_DNS_AUTHORITATIVE_PORT = zone.port
    try:
        project = fresh_project(n)
        domains = Domain.objects.filter(project=project).order_by("pk")
        warm = list(domains.filter(hostname__startswith="warm").values_list("pk", flat=True))
        ids = list(domains.exclude(hostname__startswith="warm").values_list("pk", flat=True))
        for chunk in chunked(warm, BATCH_SIZE):  # connections open, statements compiled
            verification.domain_check_many(domain_ids=chunk)
        statements: collections.Counter[str] = collections.Counter()
        waited: collections.Counter[str] = collections.Counter()
        slowest: collections.defaultdict[str, tuple[float, str]] = collections.defaultdict(
            lambda: (0.0, "")
        )
        asking = {"cpu": 0.0, "wall": 0.0}
        verify_many = diagnosis.verify_many

        def spy(execute, sql, params, many, context):
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                # A savepoint's name is its own each time: the statement's kind is the shape.
                shape = re.sub(r'"s\d+_x\d+"', "", " ".join(sql.split()[:3])).strip()
                slowest[shape] = max(slowest[shape], (time.perf_counter() - started, sql))
                statements[shape] += 1
                waited[shape] += time.perf_counter() - started

        def timed_verify_many(*args, **kwargs):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return verify_many(*args, **kwargs)
            finally:
                asking["cpu"] += time.process_time() - cpu
                asking["wall"] += time.perf_counter() - wall

        profiler = cProfile.Profile(time.process_time) if with_profile else None
        batches = list(chunked(ids, BATCH_SIZE))
        diagnosis.verify_many = timed_verify_many
        before, knot = load_average(), psutil.Process(zone.pid)
        knot_cpu = _cpu_seconds(knot)
        try:
            with connection.execute_wrapper(spy):
                cpu, wall = time.process_time(), time.perf_counter()
                if profiler:
                    profiler.enable()
                if threads:
                    with ThreadPoolExecutor(threads) as pool:
                        for done in pool.map(_checked_in_thread, batches):
                            assert done
                else:
                    for chunk in batches:
                        verification.domain_check_many(domain_ids=chunk)
                if profiler:
                    profiler.disable()
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            knot_cpu = _cpu_seconds(knot) - knot_cpu
        finally:
            diagnosis.verify_many = verify_many
        lines = [
            f"{n:,} pending domains in {len(batches)} batches, load average {before} / "
            f"{load_average()}: {1e3 * cpu / n:.2f} ms CPU and {1e3 * wall / n:.2f} ms wall per "
            f"domain; asking and deciding (diagnosis.verify_many) {1e3 * asking['cpu'] / n:.2f} "
            f"ms CPU and {1e3 * asking['wall'] / n:.2f} ms wall of it; Knot "
            f"{1e3 * knot_cpu / n:.2f} ms CPU per domain; statements per batch (wall ms each):",
        ]
        if threads:
            codes = collections.Counter(
                domains.filter(pk__in=ids).values_list("check_code", flat=True)
            )
            lines[0] = lines[0].replace(":", f" on {threads} threads:", 1)
            lines.append(f"  codes {dict(codes.most_common())}")
        for shape, count in statements.most_common():
            each = 1e3 * waited[shape] / count
            lines.append(f"  {count / len(batches):.2f} x {shape} ... ({each:.2f})")
        if os.environ.get("PROFILE_SQL"):
            lines += [f"slowest {shape}: {sql}" for shape, (_, sql) in slowest.items()]
        if profiler:
            out = io.StringIO()
            order = os.environ.get("PROFILE_SORT", "tottime")
            rows = int(os.environ.get("PROFILE_ROWS", "30"))
            pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(rows)
            lines.append(out.getvalue())
        return "\n".join(lines)
    finally:
        zone.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _checked_in_thread(domain_ids: list[int]) -> bool:
    """One batch on a thread of the pool, which keeps its database connection for the next,
    as a worker's thread does (closed when the process ends)."""
    from domains.services import verification

    verification.domain_check_many(domain_ids=domain_ids)
    return True


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sweep_profile", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--domains", type=int, default=2000, help="pending domains checked")
    parser.add_argument("--profile", action="store_true", help="cProfile's top functions too")
    parser.add_argument("--threads", type=int, default=0, help="batches on this many threads")
    args = parser.parse_args()
    create_database()
    with exclusive(ENV):
        migrate(ENV)
        setup_django(ENV)
        print(profile(args.domains, with_profile=args.profile, threads=args.threads))


if __name__ == "__main__":
    main()
