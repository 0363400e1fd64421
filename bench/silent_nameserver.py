"""What one tenant's silent name server costs the other tenants' checks in a process.

Batches of the sweep benchmark's zone (bench/sweepzone.py, served by Knot) are asked from
K threads of one process, as a checks worker's pool asks them: each batch the A and AAAA
questions of its 100 domains. With `--silent`, every batch also asks one question directly of
a server that never answers (a UDP socket that reads nothing: a tenant's dead name server,
as the doctor asks it), so each batch lasts its whole lifetime. Reported: the wall time until
every batch is answered, and this process's CPU.

    .venv/bin/python -m bench.silent_nameserver [--batches 40] [--threads 16] [--silent]
"""

from __future__ import annotations

import argparse
import ipaddress
import shutil
import socket
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.environment import ENV, setup_django
from bench.sweepzone import KnotZone, hostname

BATCH = 100
LIFETIME = 2.0


def measure(batches: int, threads: int, *, silent: bool) -> str:
    from django.conf import settings

    from domains.dns import lookups

    folder = Path(tempfile.mkdtemp(prefix="silent-nameserver-"))
    zone = KnotZone(
        batches * BATCH, settings.PLATFORM_CNAME_TARGET, settings.DASHBOARD_HOST, folder
    )
    dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dead.bind(("127.0.0.1", 0))  # bound, never read: questions to it are never answered
    settings.DOMAINS_DNS_NAMESERVERS = [zone.address]
    settings.DOMAINS_DNS_AUTHORITATIVE_PORT = dead.getsockname()[1]
    settings.OUTBOUND_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.0/8")]

    def batch(number: int) -> int:
        names = [hostname(number * BATCH + i) for i in range(BATCH)]
        questions: list[tuple[str, ...]] = [(n, t) for n in names for t in ("A", "AAAA")]
        if silent:
            questions.append((names[0], "A", "127.0.0.1"))
        found = lookups.lookup_many(questions, lifetime=LIFETIME)
        return sum(answer.status == lookups.TIMEOUT for answer in found.values())

    try:
        cpu, wall = time.process_time(), time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            timeouts = sum(pool.map(batch, range(batches)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        dead.close()
        zone.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return (
        f"{batches} batches of {BATCH} domains on {threads} threads, "
        f"{'one silent question each' if silent else 'no silent question'} "
        f"(lifetime {LIFETIME} s): {wall:.1f} s wall, {cpu:.1f} s CPU, {timeouts} timed out"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.silent_nameserver", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--silent", action="store_true", help="one silent question per batch")
    args = parser.parse_args()
    setup_django(ENV)
    print(measure(args.batches, args.threads, silent=args.silent))


if __name__ == "__main__":
    main()
