"""HTTPS throughput through the edge against its floor (the same Caddy holding the
certificate in its configuration, bench/edge/floor.py) and plain HTTP to the same web
processes, with wrk, the three alternating round by round, unpinned and with the edge's
processes pinned apart from the web's: the figures side by side against their targets,
the certificate lookups per request (from PostgreSQL's statistics), the CPU per request of
each process, and the certificate endpoint alone."""

from __future__ import annotations

import http.client
import os
import shlex
import ssl
import time
from dataclasses import dataclass, field

from django.db import connection

from bench.edge.floor import pinned, split_cores
from bench.edge.platform import WEB, Platform
from bench.edge.verify import PAGE, ZONE, https_get
from bench.environment import ROOT
from bench.load import WRK_DIR, Side, interleaved, paired, side_by_side, spread, wrk, wrk_command
from bench.processes import cpu_used
from devtools.sockets import free_port
from domains.edge.paths import CERTIFICATE_PATH
from domains.models import Certificate

LOOPBACK = "loopback.lua"
# PostgreSQL defers a backend's statistics by up to 10 s once it is idle.
STATS_LAG = 12.0
CPU_SECONDS = 5  # the length of each run measured for CPU per request
CPU_GROUPS = (WEB, "Caddy", "certificate endpoint", "PostgreSQL", "wrk")
FORWARDED = {"X-Forwarded-Proto": "https"}


# The targets: the least share of its floor's throughput the edge serves.
KEEP_ALIVE_TARGET = 0.95
FULL_HANDSHAKE_TARGET = 0.9


@dataclass(frozen=True)
class Case:
    name: str
    headers: dict[str, str] = field(default_factory=dict)
    edge_env: dict[str, str] = field(default_factory=dict)  # wrk's, on the HTTPS sides
    target: float | None = None  # edge / floor, at least


CASES = (
    Case("Keep-alive", target=KEEP_ALIVE_TARGET),
    Case("`Connection: close`: a new TCP and TLS connection per request",
         {"Connection": "close"}),
    # TLS 1.2 without tickets: wrk cannot resume (bench/wrk/full-handshakes.cnf says why).
    Case("`Connection: close`, wrk unable to resume TLS sessions: a full handshake per request",
         {"Connection": "close"}, {"OPENSSL_CONF": str(WRK_DIR / "full-handshakes.cnf")},
         target=FULL_HANDSHAKE_TARGET),
)  # fmt: skip


def _verdict(case: Case, ratio: float) -> str:
    if case.target is None:
        return "- | -"
    return f"≥ {case.target} | {'met' if ratio >= case.target else 'MISSED'}"


def certificate_lookups() -> int:
    """Scans of the certificates table so far: one per lookup of the certificate endpoint,
    its only reader while the load runs (the page does not read it, no worker runs)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) FROM pg_stat_user_tables "
            "WHERE relname = %s",
            [Certificate._meta.db_table],
        )
        return cursor.fetchone()[0]


def _plain_get(port: int, hostname: str) -> tuple[int, str]:
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        client.request("GET", "/", headers={"Host": hostname, **FORWARDED})
        response = client.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        client.close()


def _sides(platform: Platform, hostname: str, floor_port: int, case: Case) -> dict[str, dict]:
    """wrk's options for each side: plain HTTP, the floor and the edge."""
    https = {"headers": case.headers, "env": case.edge_env}
    return {
        "plain": {"url": f"http://{hostname}:{platform.web_port}/",
                  "headers": {**FORWARDED, **case.headers}},
        "floor": {"url": f"https://{hostname}:{floor_port}/", **https},
        "edge": {"url": f"https://{hostname}:{platform.https_port}/", **https},
    }  # fmt: skip


def _shown(hostname: str, case: Case, common: dict) -> str:
    """The edge side's wrk command line, paths from the checkout, the port as a variable."""
    command = wrk_command(f"https://{hostname}:PORT/", headers=case.headers, **common)
    env = [f"{name}={value}" for name, value in case.edge_env.items()]
    text = shlex.join([*env, *command]).replace(str(ROOT) + "/", "")
    return text.replace(":PORT/", ":$HTTPS_PORT/")


def _side(side: Side) -> str:
    return f"{side.rps:,.0f} req/s (p50 {side.p50_ms:.1f} ms, p99 {side.p99_ms:.1f} ms)"


def _ratio(a: Side, b: Side) -> str:
    low, high = spread(a, b, "rps")
    return f"{paired(a, b, 'rps'):.2f} (rounds {low:.2f}–{high:.2f})"


def check_pages(platform: Platform, hostname: str, floor_port: int) -> None:
    """wrk counts a 301 as an answer: every side must answer the page itself."""
    if _plain_get(platform.web_port, hostname) != (200, PAGE):
        raise SystemExit(f"edge: plain HTTP to the web processes does not answer {hostname}'s page")
    context = ssl.create_default_context(cafile=str(platform.local_ca_root))
    for name, port in (("edge", platform.https_port), ("floor", floor_port)):
        if (https_get(port, hostname, context) or ())[:2] != (200, PAGE):
            raise SystemExit(f"edge: the {name} does not answer {hostname}'s page")


def throughput_rows(platform: Platform, hostname: str, floor_port: int, args,
                    notes: list[str]) -> list[str]:  # fmt: skip
    """Every case unpinned, then the targets' cases with the edge's processes pinned apart
    from the web's (when there are two cores or more)."""
    check_pages(platform, hostname, floor_port)
    rows = [_case_row(platform, hostname, floor_port, case, "", args, notes) for case in CASES]
    if (cores := split_cores()) is None:
        notes.append("Not measured pinned: this machine gives the benchmark a single core.")
        return rows
    edge_cores, web_cores = cores
    with pinned(platform, edge_cores, web_cores):
        for case in (case for case in CASES if case.target is not None):
            pin = f", pinned (edge {_cores(edge_cores)}, web {_cores(web_cores)})"
            rows.append(_case_row(platform, hostname, floor_port, case, pin, args, notes))
    return rows


def _cores(cores: set[int]) -> str:
    return "core " + ",".join(str(core) for core in sorted(cores))


def _case_row(platform: Platform, hostname: str, floor_port: int, case: Case, pin: str,
              args, notes: list[str]) -> str:  # fmt: skip
    common = {"seconds": args.seconds, "connections": args.connections, "script": LOOPBACK}
    sides = _sides(platform, hostname, floor_port, case)
    before = certificate_lookups()
    plain, floor, edge = interleaved(*sides.items(), rounds=args.rounds, **common)
    time.sleep(STATS_LAG)
    lookups = certificate_lookups() - before
    requests = sum(run.requests for run in edge.runs + edge.warmups)
    ratio = paired(edge, floor, "rps")
    row = (
        f"| {case.name}{pin} | {_side(plain)} | {_side(floor)} | {_side(edge)} | "
        f"{_ratio(edge, floor)} | {_ratio(edge, plain)} | {_ratio(floor, plain)} | "
        f"{paired(edge, floor, 'p50_ms'):.2f} | {lookups / requests:.2f} | "
        f"{_verdict(case, ratio)} |"
    )
    print(f"edge: {row}", flush=True)
    if errors := {side.label: side.errors for side in (plain, floor, edge) if side.errors}:
        notes.append(f"{case.name}{pin}: errors {errors}.")
    if not pin:
        notes.append(f"{case.name}, edge side: `{_shown(hostname, case, common)}`.")
    return row


def lookups_note(platform: Platform, hostname: str, args) -> str:
    return (
        f"With one connection instead of {args.connections}, full handshakes make "
        f"{_lookups_alone(platform, hostname, args.seconds):.2f} certificate lookups per request "
        "(1.00 before the endpoint kept its answers): each endpoint process reads a name's "
        "rows once, and again only after the edge version moves (domains/edge/cache.py)."
    )


def _lookups_alone(platform: Platform, hostname: str, seconds: int) -> float:
    """Certificate lookups per request, full handshakes on a single connection."""
    edge_side = _sides(platform, hostname, 0, CASES[-1])["edge"]
    before = certificate_lookups()
    run = wrk(**edge_side, script=LOOPBACK, seconds=seconds, connections=1)
    time.sleep(STATS_LAG)
    return (certificate_lookups() - before) / run.requests


def cpu_rows(platform: Platform, hostname: str, floor_port: int, connections: int) -> list[str]:
    """CPU milliseconds per request of each process, one CPU_SECONDS run per figure."""
    figures = [("Plain HTTP", _sides(platform, hostname, floor_port, CASES[0])["plain"])]
    for case in CASES:
        sides = _sides(platform, hostname, floor_port, case)
        figures += [(f"Floor: {case.name}", sides["floor"]), (f"Edge: {case.name}", sides["edge"])]
    rows, plain = [], 0.0
    for name, side in figures:
        before, started = platform.cpu_seconds(), os.times()
        run = wrk(**side, script=LOOPBACK, seconds=CPU_SECONDS, connections=connections)
        after, ended = platform.cpu_seconds(), os.times()
        used = {**dict.fromkeys(CPU_GROUPS, 0.0), **cpu_used(before, after)}
        used["wrk"] = (ended.children_user - started.children_user) + (
            ended.children_system - started.children_system
        )
        per_request = [used[group] * 1000 / run.requests for group in CPU_GROUPS]
        served = sum(per_request[:-1])  # all but wrk's own
        plain = plain or served
        rows.append(
            f"| {name} | {run.rps:,.0f} | "
            + " | ".join(f"{ms:.2f}" for ms in per_request)
            + f" | {served:.2f} | {served + per_request[-1]:.2f} | {plain / served:.2f} |"
        )
    return rows


# The certificates the second edge holds (the default edge holds none).
HELD = 1000


def holding_note(platform: Platform, hostname: str, args) -> str:
    """A full handshake per request, the edge as configured by default (asking the
    certificate endpoint in each) against a second edge holding its certificates
    (EDGE_HELD_CERTIFICATES), alternating."""
    port = platform.start_edge(
        "edge-holding",
        EDGE_HELD_CERTIFICATES=str(HELD),
        HTTPS_PORT=str(free_port()),
        EDGE_CERTIFICATES_PORT=str(free_port()),
        EDGE_ADMIN=f"unix/{platform.workdir / 'holding-admin.sock'}",
        PETSTORE_VAR_DIR=str(platform.workdir / "holding"),
    )
    case = CASES[-1]
    asking = _sides(platform, hostname, 0, case)["edge"]
    held = {**asking, "url": f"https://{hostname}:{port}/"}
    holding, endpoint = interleaved(
        ("edge, holding", held), ("edge, asking", asking), rounds=args.rounds,
        seconds=args.seconds, connections=args.connections, script=LOOPBACK,
    )  # fmt: skip
    return (
        f"{case.name}: a second edge holding its certificates (domains/edge/heldcertificates.py; "
        f"EDGE_HELD_CERTIFICATES={HELD}) {_side(holding)}, the edge as configured by default, "
        f"asking the certificate endpoint in each full handshake, {_side(endpoint)}: "
        f"{_ratio(holding, endpoint)}, {args.rounds} rounds alternating, unpinned. Holding is "
        "off by default: each change of the held set reloads Caddy, which closes idle "
        "kept-alive connections (docs/decisions/edge.md)."
    )


def endpoint_note(platform: Platform, hostname: str, args) -> str:
    """The certificate endpoint alone, asked as Caddy asks it in a full handshake."""
    endpoint = platform.certificate_endpoint() + "?server_name="
    unknown, active = side_by_side(
        ("unknown name (204)", {"url": endpoint + f"unknown.{ZONE}"}),
        ("active name (200: chain and key)", {"url": endpoint + hostname}),
        rounds=min(args.rounds, 4), seconds=args.seconds, connections=args.connections,
    )  # fmt: skip
    return (
        f"The certificate endpoint alone, wrk straight to `GET {CERTIFICATE_PATH}` as Caddy "
        f"asks it in a full handshake, {min(args.rounds, 4)} rounds: {_side(active)} for an "
        f"active name, {_side(unknown)} for an unknown one."
    )
