"""The server table: the same app and the same floor under each WSGI server, and the FastAPI
peer, side by side (`bench/run.py` measures it unless `--skip-servers`; alone:
`bench/run.py --servers-only`).

For each worker count (2 x cores + 1 and cores + 1) every server below is started at once on
a port of its own, then driven in rounds, one wrk run after another in the same order each
round: the list (`GET /v1/pets?limit=100`, bearer key) and the floor (`/bench/floor?limit=100`)
on each Django server, the list on the peer. Around each run the CPU time of the server's
process tree and of the `bench` database's PostgreSQL backends is read (psutil), so CPU per
request is measured on the same requests as req/s. Ratios are medians of per-round ratios.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import sections  # noqa: E402
from bench.environment import ENV  # noqa: E402
from bench.load import Run, wrk  # noqa: E402
from bench.processes import cpu_seconds, cpu_used, procfile_lines, stop, tree  # noqa: E402

SECTION = "## Servers"
# Where the section goes when the file has none yet: before these.
FOLLOWED_BY = ("## Fairness", "## TLS edge")
FIRST_PORT = int(os.environ.get("BENCH_SERVERS_PORT", "8180"))
BIN = ROOT / ".venv" / "bin"
# Connections per peer worker, at most (opened as needed): a worker may hold more than its
# share of wrk's 16 connections; with 3 per worker the pool capped the peer (about -15 %).
PEER_POOL = "8"


@dataclass
class Server:
    label: str
    config: str  # how it is sized, for the table
    command: Callable[[int, int], list[str]]  # (port, workers) -> argv
    django: bool = True  # serves our list and the floor; otherwise the FastAPI peer


def gunicorn(worker_class: str, threads: int) -> Callable[[int, int], list[str]]:
    return lambda port, workers: [
        str(BIN / "gunicorn"), "petstore.wsgi", "--bind", f"127.0.0.1:{port}",
        "--worker-class", worker_class, "--workers", str(workers), "--threads", str(threads),
        "--log-level", "warning",
    ]  # fmt: skip


def granian(blocking: int, *options: str) -> Callable[[int, int], list[str]]:
    return lambda port, workers: [
        str(BIN / "granian"), "--interface", "wsgi", "petstore.wsgi:application",
        "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
        "--blocking-threads", str(blocking), "--log-level", "warning", *options,
    ]  # fmt: skip


def uvicorn(port: int, workers: int) -> list[str]:
    return [
        str(BIN / "uvicorn"), "bench.peer:app", "--host", "127.0.0.1", "--port", str(port),
        "--workers", str(workers), "--loop", "uvloop", "--http", "httptools",
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip


def production(port: int, workers: int) -> list[str]:
    """Procfile.production's web line as a process manager runs it, environment included
    (petstore/webserver.py: granian WSGI; no access line, the edge writes it), with this
    checkout's `python` first on the PATH."""
    return [
        "/usr/bin/env", f"PORT={port}", f"WEB_CONCURRENCY={workers}",
        f"PATH={BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "/bin/sh", "-c", "exec " + procfile_lines()["web"],
    ]  # fmt: skip


SERVERS = [
    Server(f"production: `{procfile_lines()['web']}`", "granian WSGI, 1 thread, no access log (the edge writes it)", production),  # noqa: E501
    Server("gunicorn sync", "1 thread", gunicorn("sync", 1)),
    Server("gunicorn gthread", "4 threads", gunicorn("gthread", 4)),
    Server("granian WSGI", "1 blocking thread", granian(1)),
    Server("granian WSGI", "2 blocking threads", granian(2)),
    Server("granian WSGI", "1 blocking thread, 2 runtime threads", granian(1, "--runtime-threads", "2")),  # noqa: E501
    Server("granian WSGI", "1 blocking thread, backpressure 1", granian(1, "--backpressure", "1")),  # noqa: E501
    Server("FastAPI peer: uvicorn", f"uvloop, httptools, asyncpg pool {PEER_POOL}", uvicorn, False),  # noqa: E501
]  # fmt: skip


def rounds(args) -> int:
    """Half the run's rounds (at least 3): each round here is a run of every server and URL."""
    return max(3, args.rounds // 2)


@dataclass
class Measured:
    """One server's runs of one URL: wrk's figures and CPU seconds per run."""

    runs: list[Run] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)
    db_cpu: list[float] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return statistics.median(getattr(r, attr) for r in self.runs)

    def cpu_ms(self, which: list[float]) -> float:
        return statistics.median(
            1000 * cpu / run.requests for cpu, run in zip(which, self.runs, strict=True)
        )


def ratio(a: Measured, b: Measured) -> tuple[float, float, float]:
    """Median, lowest and highest per-round throughput ratio a / b."""
    each = [x.rps / y.rps for x, y in zip(a.runs, b.runs, strict=True)]
    return statistics.median(each), min(each), max(each)


def free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def start(argv: list[str], port: int, env: dict[str, str], probe: str) -> subprocess.Popen:
    """Start a server, its output to a log file of its own, and wait until `probe` answers
    on its port."""
    if not free(port):
        raise SystemExit(f"port {port} is already in use (BENCH_PORT, BENCH_SERVERS_PORT)")
    log_path = Path(tempfile.gettempdir()) / f"petstore-bench-{port}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, start_new_session=True, stdout=log, stderr=log
        )
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(
                f"{' '.join(argv)} exited:\n" + log_path.read_text(errors="replace")[-3000:]
            )
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{probe}", timeout=2)  # noqa: S310
            return proc
        except OSError:
            time.sleep(0.2)
    stop(proc)
    raise SystemExit(f"{' '.join(argv)} did not answer; its log: {log_path}")


def database_backends() -> list[psutil.Process]:
    """The PostgreSQL backends serving the benchmark's database (their title names it)."""
    name = ENV["DATABASE_URL"].rsplit("/", 1)[1]
    found = []
    for process in psutil.process_iter(["cmdline"]):
        title = " ".join(process.info["cmdline"] or [])
        if title.startswith("postgres: ") and f" {name} " in title:
            found.append(process)
    return found


def measured_run(url: str, headers: dict[str, str], server: psutil.Process, args) -> tuple:
    groups = [("server", p) for p in tree(server)] + [("db", p) for p in database_backends()]
    before = cpu_seconds(groups)
    run = wrk(url, seconds=args.seconds, connections=args.connections, headers=headers)
    groups = [("server", p) for p in tree(server)] + [("db", p) for p in database_backends()]
    used = cpu_used(before, cpu_seconds(groups))
    return run, used.get("server", 0.0), used.get("db", 0.0)


def measure_size(workers: int, token: str, args) -> dict[tuple[int, str], Measured]:
    """Every server with `workers` workers, `rounds(args)` interleaved rounds."""
    env = {**ENV, "PEER_POOL": PEER_POOL}
    auth = {"Authorization": f"Bearer {token}"}
    started: list[subprocess.Popen] = []
    results: dict[tuple[int, str], Measured] = {}
    try:
        targets = []
        for i, server in enumerate(SERVERS):
            port = FIRST_PORT + i
            probe = "/healthz" if server.django else "/v1/pets?limit=1"
            proc = start(server.command(port, workers), port, env, probe)
            started.append(proc)
            base = f"http://127.0.0.1:{port}"
            urls = (
                [("list", f"{base}/v1/pets?limit=100", auth),
                 ("floor", f"{base}/bench/floor?limit=100", {})]
                if server.django else [("list", f"{base}/v1/pets?limit=100", {})]
            )  # fmt: skip
            for what, url, headers in urls:
                targets.append((i, what, url, headers, psutil.Process(proc.pid)))
                results[(i, what)] = Measured()
        for _, _, url, headers, _ in targets:  # warm-up: every worker's connection, caches
            wrk(url, seconds=2, connections=args.connections, headers=headers)
        for n in range(rounds(args)):
            print(f"servers: {workers} workers, round {n + 1} of {rounds(args)}", flush=True)
            for i, what, url, headers, process in targets:
                run, server_cpu, db_cpu = measured_run(url, headers, process, args)
                m = results[(i, what)]
                m.runs.append(run)
                m.server_cpu.append(server_cpu)
                m.db_cpu.append(db_cpu)
    finally:
        for proc in started:
            stop(proc)
    return results


def table(workers: int, results: dict[tuple[int, str], Measured]) -> list[str]:
    peer = results[(len(SERVERS) - 1, "list")]
    gunicorn_sync = results[(1, "list")]
    lines = [
        f"{workers} workers:",
        "",
        "| Server | Per worker | List req/s | p50 / p99 ms | CPU ms per request: server, "
        "PostgreSQL | List / FastAPI peer | List / floor (same server) | Floor req/s | "
        "Floor / FastAPI peer | List / gunicorn sync |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, server in enumerate(SERVERS):
        ours = results[(i, "list")]
        cells = [
            server.label, server.config, f"{ours.median('rps'):,.0f}",
            f"{ours.median('p50_ms'):.1f} / {ours.median('p99_ms'):.1f}",
            f"{ours.cpu_ms(ours.server_cpu):.2f}, {ours.cpu_ms(ours.db_cpu):.2f}",
        ]  # fmt: skip
        if server.django:
            floor = results[(i, "floor")]
            cells += [
                "{:.2f} ({:.2f}–{:.2f})".format(*ratio(ours, peer)),
                "{:.2f} ({:.2f}–{:.2f})".format(*ratio(ours, floor)),
                f"{floor.median('rps'):,.0f}",
                "{:.2f} ({:.2f}–{:.2f})".format(*ratio(floor, peer)),
                "{:.2f} ({:.2f}–{:.2f})".format(*ratio(ours, gunicorn_sync)),
            ]
        else:
            cells += [
                "1.00",
                "-",
                "-",
                "-",
                "{:.2f} ({:.2f}–{:.2f})".format(*ratio(ours, gunicorn_sync)),
            ]  # noqa: E501
        lines.append("| " + " | ".join(cells) + " |")
    errors = sum(m.median("errors") for m in results.values())
    lines += [""] + (
        [f"- Non-2xx answers or socket errors in a median run: {errors:.0f}."] if errors else []
    )  # noqa: E501
    return lines


def measure(args, token: str, machine: str) -> list[str]:
    started = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    cores = os.cpu_count() or 1
    sizes = [2 * cores + 1, cores + 1]
    tables = [
        line for workers in sizes for line in table(workers, measure_size(workers, token, args))
    ]  # noqa: E501
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    return [
        SECTION,
        "",
        f"Run by `bench/servers.py` in {time.monotonic() - started:.0f} s, on {machine}. Load "
        f"average before / after: {load}. The machine is shared: other work running at the "
        "same time shows in the absolute figures, less in the ratios.",
        "",
        "The same app (bench settings: production's, rate limits off, CONN_MAX_AGE=600) and "
        "the same floor under each server, and the FastAPI peer (bench/peer.py: FastAPI, "
        "asyncpg, uvicorn with uvloop and httptools, the same SQL and JSON) with the same "
        "number of worker processes; every server started at once, each on its own port. wrk: "
        f"one thread, {args.connections} connections, {rounds(args)} rounds of "
        f"{args.seconds} s per server and URL, after a 2 s warm-up of each, the runs in the "
        "same order every round. req/s and latencies are each side's median round; ratios the "
        "median of per-round ratios (lowest–highest in brackets). CPU per request: CPU "
        "seconds of the server's process tree and of the `bench` database's PostgreSQL "
        "backends over the run, divided by the requests answered, median over rounds (wrk's "
        "own CPU is not counted).",
        "",
        *tables,
        "Reproduce: `.venv/bin/python bench/run.py --servers-only` (this section alone) or "
        "`make bench`; `--skip-servers` keeps this section as it was. Why the production "
        "server is the one it is: docs/decisions/performance.md.",
        "",
    ]


def kept_section() -> list[str]:
    """This section of bench/results.md as it stands (for a run that does not measure it)."""
    return sections.kept(SECTION, FOLLOWED_BY)


def write_section(lines: list[str]) -> None:
    """Replace this section of bench/results.md, keeping the rest."""
    sections.write(SECTION, FOLLOWED_BY, lines)
    print("\n".join(lines))
