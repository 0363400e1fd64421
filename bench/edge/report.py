"""The run of both edge benchmarks on a platform of their own, and their section of
bench/results.md (always the file's last), which says how each figure is measured."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from django.conf import settings

from bench.edge.floor import start_floor
from bench.edge.platform import WEB_LINE, Platform, start_pebble
from bench.edge.throughput import (
    CPU_GROUPS,
    CPU_SECONDS,
    cpu_rows,
    endpoint_note,
    holding_note,
    lookups_note,
    throughput_rows,
)
from bench.edge.verify import (
    DOMAINS,
    PROBE_EVERY,
    Scenario,
    delay_share,
    fresh_project,
    latency_row,
    run_scenario,
)
from bench.environment import ENV, ROOT, exclusive, machine, migrate
from devtools.devserver import procfile_command

RESULTS = ROOT / "bench" / "results.md"
SECTION = "## TLS edge"


def _terminated(signum, frame) -> None:
    raise SystemExit(f"edge: stopped by signal {signum}")


def measure(args) -> list[str]:
    """Both benchmarks on a platform of their own; the lines of the results section."""
    started = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    notes: dict[str, list[str]] = {"latency": [], "throughput": []}
    # A stop signal must still stop every process started here (the `finally`s below).
    previous = signal.signal(signal.SIGTERM, _terminated)
    workdir = Path(tempfile.mkdtemp(prefix="edge-bench-"))
    try:
        with exclusive(ENV):
            migrate(ENV)
            platform = Platform.start(workdir)
            try:
                project, owner = fresh_project()
                results = {}
                for ca in ("local", "acme"):
                    # The local CA's root appears with its first certificate (the warm-up's).
                    worker_env, root = {}, platform.local_ca_root
                    if ca == "acme":
                        worker_env, root = start_pebble(platform)
                    for delay in (None, "0"):
                        scenario = Scenario(ca, delay)
                        results[scenario] = run_scenario(
                            platform, project, owner, scenario, worker_env, root
                        )
                default_delay = settings.DOMAINS_CERT_ISSUE_DELAY
                latency = [latency_row(*item, default_delay) for item in results.items()]
                notes["latency"] += delay_share(results)
                # The local CA's warm-up domain: active, and measured by nothing else.
                hostname = Scenario("local", None).warm_up_hostname
                floor_port = start_floor(platform, hostname)
                rows = throughput_rows(platform, hostname, floor_port, args, notes["throughput"])
                notes["throughput"].append(lookups_note(platform, hostname, args))
                cpu = cpu_rows(platform, hostname, floor_port, args.connections)
                notes["throughput"].append(endpoint_note(platform, hostname, args))
                notes["throughput"].append(holding_note(platform, hostname, args))
            finally:
                platform.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(workdir, ignore_errors=True)
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    return section(latency, rows, cpu, notes, args, time.monotonic() - started, load)


def section(latency: list[str], throughput: list[str], cpu: list[str],
            notes: dict[str, list[str]], args, elapsed: float, load: str) -> list[str]:  # fmt: skip
    return [
        SECTION,
        "",
        f"Run on {dt.date.today().isoformat()} by `python -m bench.edge` in {elapsed:.0f} s, on "
        f"{machine()}. Load average before / after the run: {load}. The machine is shared: "
        "other work running at the same time shows in the absolute figures.",
        "",
        "Served as in production, on free loopback ports: Procfile.production's web line "
        f"`{WEB_LINE}` (the edge writes the access line), petstore/Procfile's edge "
        f"`{procfile_command('edge')}` (the loopback "
        "certificate endpoint, granian 2 processes x 8 threads, and Caddy on HTTPS_PORT), "
        f"worker `{procfile_command('worker')}`; PostgreSQL and Redis (broker and cache) on "
        "loopback, production settings (bench/environment.py), the loopback DNS server "
        "(devtools/devdns.py) in the benchmark's process. No beat: every check here "
        "is queued by Verify.",
        "",
        "### Verify → first HTTPS response with the new certificate",
        "",
        f"Per row, {DOMAINS} domains one after another, after one unmeasured domain that warms "
        "the row's freshly started worker. For each: its CNAME is put in the DNS and it is "
        "added; the clock starts when Verify is requested as the dashboard requests it "
        "(`domains.tasks.request_check`); a probe then opens a new TLS connection to the edge "
        f"every {PROBE_EVERY * 1000:.0f} ms with the domain's name as SNI, verifying the chain "
        "against the CA's root, and sends `GET /`; the clock stops when one answers 200 with "
        "the project's page. The certificate it presented is then checked to be the stored one "
        "(same serial). Pebble: Debian's /usr/bin/pebble on loopback as tests/fixtures/pebble.py "
        "runs it (a throwaway CA for its own HTTPS listener, `PEBBLE_VA_NOSLEEP=1`, `httpPort` "
        "the web process, `-dnsserver` the loopback DNS server). The three right-hand columns "
        "are each phase's own median (they need not add up to the median total).",
        "",
        "| CA | DOMAINS_CERT_ISSUE_DELAY | Verify → first HTTPS 200: median | p90 | max | "
        "Verify → check recorded | check → certificate stored | stored → first HTTPS 200 |",
        "|---|---|---|---|---|---|---|---|",
        *latency,
        "",
        *[f"- {note}" for note in notes["latency"]],
        "- The Pebble rows' check → certificate stored includes the acme client's own waits "
        "(acme/client.py, called by domains/pki/acme.py): after answering the challenge it "
        "looks at the authorization again only 1 s later, and after finalizing it waits 1 s "
        "before its first look at the order, so an issuance takes about 2 s however fast the "
        "CA is.",
        "",
        "### HTTPS throughput through the edge",
        "",
        "wrk on one active domain's page (local CA certificate), three sides alternating "
        "round by round: plain HTTP straight to the web processes; the edge's floor, the same "
        "Caddy binary in the edge's own configuration (domains/edge/caddy.py, on a port of its "
        "own) proxying to the same web processes, but holding this domain's certificate (the "
        "stored one, the same files) in its configuration (`tls.certificates.load_files`) "
        "instead of asking the certificate endpoint in each full handshake "
        "(bench/edge/floor.py); and HTTPS through the edge (Caddy → the web processes) as "
        "configured by default, asking the endpoint (`EDGE_HELD_CERTIFICATES=0`; a note below "
        "measures an edge holding its certificates). One "
        f"wrk thread, {args.connections} connections, {args.rounds} rounds of {args.seconds} s "
        "per side after a 2 s warm-up each; figures are each side's median round, ratios the "
        "median of the per-round ratios. The targets are the edge against its floor: what "
        "TLS and proxying cost is in both, so the ratio is what the edge's own way of "
        "finding certificates costs. The pinned rows measure the same with the edge's "
        "processes (its Caddy, the certificate endpoint and the floor's Caddy) on one half "
        "of the cores and the web processes on the other, every thread of each (as "
        "`taskset -a -p` pins them; PostgreSQL and wrk unpinned), so the two sides of a "
        "round cannot take each other's core. wrk sends the URL's host as SNI "
        "and Host; bench/wrk/loopback.lua connects it to 127.0.0.1, so the custom domain's "
        "name needs no /etc/hosts entry. The plain side sends `X-Forwarded-Proto: https`, as "
        "Caddy does: the domain is active, and without it the web answers plain HTTP with a "
        "301 to https instead of the page. granian keeps connections alive, so plain HTTP "
        "reuses its connections unless the client asks `Connection: close`, and Caddy reuses "
        "its own to the web processes whatever the client asks (reverse_proxy keep-alive, "
        "domains/edge/caddy.py). The endpoint keeps its answers in each process until the "
        "edge version moves (domains/edge/cache.py). Certificate lookups are counted "
        "from PostgreSQL's statistics of the certificates table (one index scan per lookup).",
        "",
        "| Figure | Plain HTTP → web | Floor: HTTPS → Caddy, certificate in its configuration "
        "→ web | HTTPS → edge → web | Throughput edge / floor | Edge / plain | Floor / plain "
        "| p50 latency edge / floor | Certificate lookups per edge request | Target | Met |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *throughput,
        "",
        f"CPU per request, in ms, from each process's CPU time around one more {CPU_SECONDS} s "
        "run per figure (wrk: the load generator itself, on the same 2 cores; PostgreSQL: the "
        "backends of the bench database; Caddy: the floor's on its rows, the edge's on its "
        "own). The last column is the cost without the load "
        "generator's: the share of plain HTTP's throughput the same CPU would serve through "
        "the floor or the edge.",
        "",
        "| Figure | req/s | " + " | ".join(CPU_GROUPS) + " | serving (all but wrk) | total "
        "| plain / this, serving |",
        "|---|---|" + "---|" * len(CPU_GROUPS) + "---|---|---|",
        *cpu,
        "",
        "- `Connection: close` alone: wrk keeps each connection's TLS session and resumes it "
        "on the next connection (TLS 1.3 tickets, which Caddy issues); a resumed handshake "
        "presents no certificate, so Caddy asks the certificate endpoint nothing. The last row "
        "takes resumption away (bench/wrk/full-handshakes.cnf: TLS 1.2 without tickets).",
        *[f"- {note}" for note in notes["throughput"]],
        "",
        "Reproduce: `make bench BENCH_ARGS=--edge-only` or `.venv/bin/python -m bench.edge` "
        "(this section alone; needs PostgreSQL, Redis, wrk and Debian's pebble); `make bench` "
        "runs it with the rest, `--skip-edge` keeps this section as it was.",
        "",
    ]


def _results() -> tuple[str, str]:
    """bench/results.md before this section, and this section (always the file's last)."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    start = text.find("\n" + SECTION + "\n")
    return (text[:start], text[start + 1 :]) if start >= 0 else (text, "")


def kept_section() -> list[str]:
    """This section of bench/results.md as it stands (for a run that skips the edge)."""
    kept = _results()[1]
    return kept.splitlines() + [""] if kept else []


def write_section(lines: list[str]) -> None:
    """Replace this section of bench/results.md, keeping the rest."""
    RESULTS.write_text(_results()[0].rstrip("\n") + "\n\n" + "\n".join(lines))
    print("\n".join(lines))
