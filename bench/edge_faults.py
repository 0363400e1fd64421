"""A client's fault at the edge: an anonymous client sending chunked bodies of 5 MB to the API,
and another client's p90 beside it (devtools/bodyflood.py), with the edge before one web process
and before two.

Production's lines on free loopback ports: two web processes (Procfile.production's `web`, the
launcher's default workers each) and two edges (its `edge`, plain HTTP: the proxying is the
same as over HTTPS), one before the first web process, one before both. For each, and each
attacker rate (bodies a second, one after the other), the victim, one client on one kept-alive
connection sending `GET /v1/pets?limit=20` 40 times a second on a schedule (latency from when
each request was due), in windows of WINDOW seconds alternating without and with the attacker,
ROUNDS of each. Target: the attacked p90 within 1.5x of the quiet one (docs/decisions/edge.md).

`.venv/bin/python bench/edge_faults.py` rewrites its section of bench/results.md;
tests/domains/edge/test_client_faults.py is the short version the suite runs.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.environment import ENV, create_database, machine, migrate, setup_django  # noqa: E402

setup_django(ENV)

from django.contrib.auth import get_user_model  # noqa: E402

from bench import sections  # noqa: E402
from bench.processes import procfile_lines, stop, wait_until  # noqa: E402
from devtools.bodyflood import BODY_SIZE, Comparison, Victim, compare, p90  # noqa: E402
from devtools.processes import spawn  # noqa: E402
from devtools.sockets import free_port, tcp_port_open  # noqa: E402
from petstore.apikeys.services import api_key_issue  # noqa: E402

SECTION = "## A client's faults at the edge"
# Where the section goes when the file has none yet: before these.
FOLLOWED_BY = ("## TLS edge",)
RATES = (1.0, 4.0, 16.0)
ROUNDS = 10
WINDOW = 1.0
PATH = "/v1/pets?limit=20"


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):  # noqa: S310 - loopback
            return True
    except OSError:
        return False


def start(workdir: Path, name: str, line: str, ready: str, **extra: str):
    env = {
        **ENV,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PETSTORE_VAR_DIR": str(workdir / name),
        **extra,
    }
    log = workdir / f"{name}.log"
    process = spawn(["/bin/sh", "-c", "exec " + line], env=env, log_path=log)
    if ready.startswith("http"):
        wait_until(name, lambda: answers(ready), process, log)
    else:
        wait_until(name, lambda: tcp_port_open(int(ready)), process, log)
    return process


def measure() -> list[str]:
    create_database()
    migrate(ENV)
    begun = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    user, _ = get_user_model().objects.get_or_create(username="bench-victim")
    key = api_key_issue(user=user, name="edge faults").plaintext
    workdir = Path(tempfile.mkdtemp(prefix="edge-faults-"))
    lines = procfile_lines()
    processes = []
    results: dict[tuple[int, float], Comparison] = {}
    try:
        webs = []
        for index in range(2):
            port = free_port()
            health = f"http://127.0.0.1:{port}/healthz"
            processes.append(start(workdir, f"web{index}", lines["web"], health, PORT=str(port)))
            webs.append(f"127.0.0.1:{port}")
        edges = {}
        for count in (1, 2):
            port = free_port()
            processes.append(
                start(
                    workdir, f"edge{count}", lines["edge"], str(port),
                    HTTP_PORT=str(port), HTTPS_PORT=str(free_port()),
                    EDGE_CERTIFICATES_PORT=str(free_port()),
                    EDGE_UPSTREAMS=",".join(webs[:count]),
                    EDGE_ADMIN=f"unix/{workdir / f'admin{count}.sock'}",
                )
            )  # fmt: skip
            edges[count] = port
        for count, port in edges.items():
            for rate in RATES:
                victim = Victim(port, PATH, {"Authorization": f"Bearer {key}"})
                try:
                    results[count, rate] = compare(
                        victim, port, rate=rate, rounds=ROUNDS, seconds=WINDOW
                    )
                finally:
                    victim.close()
                print(count, rate, row(count, rate, results[count, rate]), flush=True)  # noqa: T201
    finally:
        for process in processes:
            stop(process)
    elapsed = time.monotonic() - begun
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    return section(results, elapsed, load)


def row(count: int, rate: float, result: Comparison) -> str:
    processes = "one web process" if count == 1 else "two web processes"
    verdict = "met" if result.ratio <= 1.5 else "MISSED"
    return (
        f"| {processes}, {rate:g} bodies/s | {p90(result.quiet):.1f} ms "
        f"| {p90(result.attacked):.1f} ms | {result.ratio:.2f} | ≤ 1.5x | {verdict} |"
    )


def described(counts: Counter) -> str:
    ordered = sorted(counts.items(), key=str)
    return ", ".join(f"{n} {status or 'no answer'}" for status, n in ordered)


def section(results: dict[tuple[int, float], Comparison], elapsed: float, load: str) -> list[str]:
    lines = [
        SECTION,
        "",
        f"Run on {time.strftime('%Y-%m-%d')} by `bench/edge_faults.py` in {elapsed:.0f} s, on "
        f"{machine()}. Load average before / after the run: {load}. The machine is shared: "
        "other work running at the same time shows in the absolute figures.",
        "",
        f"An anonymous client sends chunked POSTs of {BODY_SIZE // 2**20} MB to `/v1/pets` (no "
        "key: 401 before the body is read), one after the other at the rate shown; another "
        f"client, on one kept-alive connection, sends `GET {PATH}` with its key 40 times a "
        "second on a schedule, each latency counted from when the request was due. "
        f"{ROUNDS} windows of {WINDOW:g} s without the attacker alternate with {ROUNDS} with "
        "it; the p90 of each side's pooled latencies. Production's lines: Procfile.production's "
        "`web` (the launcher's default workers) twice and its `edge` (plain HTTP) before the "
        "first alone and before both, on loopback; devtools/bodyflood.py.",
        "",
        "| Edge before | p90 without the attacker | p90 with it | Ratio | Target | |",
        "|---|---|---|---|---|---|",
        *(row(count, rate, result) for (count, rate), result in results.items()),
        "",
    ]
    for (count, rate), result in results.items():
        reached = sum(result.attacker.values()) / (ROUNDS * WINDOW)
        lines.append(
            f"- {count} web process{'es' if count > 1 else ''}, {rate:g}/s asked, {reached:.1f}/s "
            f"sent (one body after the other): the attacker was answered "
            f"{described(result.attacker)}; the victim {described(result.victim)}."
        )
    lines += [
        "",
        "Reproduce: `.venv/bin/python bench/edge_faults.py` (PostgreSQL and Redis on loopback; "
        "`BENCH_DB`, `BENCH_REDIS_URL`, `BENCH_BROKER_URL` to use others). Why: "
        "docs/decisions/edge.md, A client's fault takes no web process out.",
        "",
    ]
    return lines


def kept_section() -> list[str]:
    """This section of bench/results.md as it stands (for a run that does not measure it)."""
    return sections.kept(SECTION, FOLLOWED_BY)


def write_section(lines: list[str]) -> None:
    """Replace this section of bench/results.md, keeping the rest."""
    sections.write(SECTION, FOLLOWED_BY, lines)


if __name__ == "__main__":
    write_section(measure())
