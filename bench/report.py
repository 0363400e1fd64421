"""bench/results.md: each figure's row, its ratio against the floor or the peer measured in
the same run, met or MISSED, and the file written with the sections kept or measured."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from bench.environment import machine
from bench.load import Side, paired, spread
from bench.web import BENCH_WORKERS, WEB_LINE
from petstore.env import env_bool

ROOT = Path(__file__).resolve().parent.parent
# Targets: (figure, lowest ratio met).
VS_PEER, VS_FLOOR = 1.0, 0.9
# createPet: the keyed create against the plain one, and the create against the pgbench floor.
KEYED_POST, VS_FLOOR_CREATE = 0.9, 0.5
EDGE_KEEP_ALIVE, EDGE_FULL_HANDSHAKE = 0.95, 0.9  # against the edge's floor
SWEEP_SECONDS = 15.0


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def figures(side: Side) -> str:
    cpu = f", CPU {side.cpu_ms:.2f} ms/req" if side.cpu_ms is not None else ""
    return f"{side.rps:,.0f} req/s (p99 {side.p99_ms:.1f} ms{cpu})"


def row(name: str, base: Side, ours: Side, least: float | None) -> str:
    """A throughput target: ours / base at least `least` (and, when both sides were measured
    with their CPU, what the CPU per request says the ratio would be on cores of our own);
    with no `least`, a figure reported beside the targets."""
    ratio = paired(ours, base, "rps")
    low, high = spread(ours, base, "rps")
    by_cpu = (
        f"; by CPU per request {base.cpu_ms / ours.cpu_ms:.2f}"
        if base.cpu_ms is not None and ours.cpu_ms is not None
        else ""
    )
    target = "-" if least is None else f"throughput ≥ {least}"
    met = "-" if least is None else verdict(ratio >= least)
    return (
        f"| {name} | {figures(base)} | {figures(ours)} | {ratio:.2f} (rounds "
        f"{low:.2f}–{high:.2f}){by_cpu} | {target} | {met} |"
    )


def list_rows(name: str, floor: Side, ours: Side, peer: Side) -> list[str]:
    """The list against the FastAPI peer and against the floor, measured in the same rounds."""
    return [
        row(f"{name} vs FastAPI peer", peer, ours, VS_PEER),
        row(f"{name} vs floor (same server)", floor, ours, VS_FLOOR),
    ]


def edge_rows(section: list[str]) -> list[str]:
    """The edge's two targets against its floor, unpinned and pinned, read from its
    section's throughput table (bench/edge/)."""
    wanted = (
        ("Keep-alive", "keep-alive", EDGE_KEEP_ALIVE),
        ("`Connection: close`, wrk unable to resume TLS sessions: a full handshake per request",
         "a full TLS handshake per request", EDGE_FULL_HANDSHAKE),
    )  # fmt: skip
    table = [
        cells
        for line in section
        if line.startswith("| ")
        and len(cells := [c.strip() for c in line.strip("|").split("|")]) >= 11
        and cells[4][:1].isdigit()
    ]
    rows = []
    for label, name, least in wanted:
        for pin in ("", ", pinned"):
            figure = f"Edge: {name}{pin}, vs its floor (the same Caddy, its certificate loaded)"
            found = [c for c in table if (c[0].startswith(label + pin) if pin else c[0] == label)]
            if not found:
                rows.append(f"| {figure} | - | - | not measured | throughput ≥ {least} | MISSED |")
                continue
            cells = found[0]
            if pin:
                figure = f"Edge: {name}{cells[0].removeprefix(label)}, vs its floor"
            ratio = float(cells[4].split()[0])
            rows.append(
                f"| {figure} | {cells[2]} | {cells[3]} | {cells[4]} | throughput ≥ {least} | "
                f"{verdict(ratio >= least)} |"
            )
    return rows


# Rows `make bench` does not measure: written by bench/edge_held.py's runs, kept as they stand.
EDGE_AT_SCALE = ("Edge: Remove → placeholder", "Edge: other tenants' kept-alive")


def kept_lines(*starts: str) -> list[str]:
    """The lines of bench/results.md that start with one of `starts`, as they stand."""
    results = ROOT / "bench" / "results.md"
    text = results.read_text() if results.exists() else ""
    return [line for line in text.splitlines() if line.startswith(starts)]


def kept_rows(*figures: str) -> list[str]:
    """The rows of bench/results.md whose figure starts with one of `figures`, as they stand
    (the sweep's for a run with --skip-domains; the edge's at scale always)."""
    return kept_lines(*(f"| {figure}" for figure in figures))


# The note that says where kept sweep rows come from (written by hand with the run that
# measured them: which machine, commit and hour); kept with the rows.
SWEEP_NOTE = "The domain sweep's rows are kept from the run"


def kept_sweep_note() -> str:
    """The note on the kept sweep rows as it stands, or its first sentence."""
    kept = kept_lines(f"- {SWEEP_NOTE}")
    return kept[0].removeprefix("- ") if kept else f"{SWEEP_NOTE} that measured them."


def sweep_target(rows: list[str]) -> list[str]:
    """bench/domains_sweep.py's rows with the 10,000-domain sweep held to SWEEP_SECONDS."""
    out = []
    for line in rows:
        match = re.match(r"\| (Domain sweep: [\d,]+ pending re-checked[^|]*)\| limit \d+ s \| "
                         r"([\d.]+) s \(([\d,]+) checked\)", line)  # fmt: skip
        if match:
            seconds, done = float(match[2]), int(match[3].replace(",", ""))
            pending = int(re.search(r"([\d,]+) pending", match[1])[1].replace(",", ""))
            line = (
                f"| {match[1]}| limit {SWEEP_SECONDS:.0f} s | {seconds:.1f} s ({done:,} "
                f"checked) | {seconds / SWEEP_SECONDS:.2f} | < {SWEEP_SECONDS:.0f} s | "
                f"{verdict(seconds < SWEEP_SECONDS and done >= pending)} |"
            )
        out.append(line)
    return out


def write_results(
    rows: list[str],
    notes: list[str],
    args,
    elapsed: float,
    load: str,
    workers: int,
    edge: list[str],
) -> None:
    missed = any("MISSED" in row for row in rows)
    sizing = f"WEB_CONCURRENCY={BENCH_WORKERS}" if BENCH_WORKERS else "the launcher's default"
    lines = [
        "# Benchmark results",
        "",
        f"Run on {dt.date.today().isoformat()} by `make bench` in {elapsed:.0f} s, on "
        f"{machine()}. Load average before / after the run: {load}.",
        f"Server: Procfile.production's web line, `{WEB_LINE}`, with {workers} workers "
        f"({sizing}) "
        "and the benchmark's settings; listPets hot path "
        f"{'on' if env_bool('API_LIST_FAST_PATH', True) else 'off'} "
        "(`API_LIST_FAST_PATH`), PostgreSQL on loopback, Redis cache, "
        "persistent DB connections (CONN_MAX_AGE=600), rate limits off. The FastAPI peer "
        "(bench/peer.py: FastAPI, asyncpg, uvicorn with uvloop and httptools, the same SQL, JSON "
        "and next link, no authentication on its list; its create checks the bearer key and "
        f"validates with pydantic) runs {workers} worker processes too. Load: wrk, one "
        f"thread, {args.connections} connections, {args.rounds} rounds of {args.seconds} s per "
        "side, the sides of a comparison alternating (floor, ours, peer for the list) after a "
        "2 s warm-up each. Absolute figures are each side's median round; the ratio is the "
        "median of the per-round ratios (their lowest and highest in brackets). CPU per request: "
        "the CPU time of the server's process tree and of the `bench` database's PostgreSQL "
        "backends over each run, divided by its requests, median over rounds; the ratio by CPU "
        "per request (baseline's / ours) estimates the throughput ratio on cores of their own "
        "(every server here is CPU-bound), and holds on a shared machine where throughput "
        "ratios spread. Each list "
        "target is a throughput ratio, the deep page's included (the page after id 900,000, "
        "reached by a next link's cursor: ours and the peer's signed, the floor's `after`). "
        "The list is measured as production serves it, every request reading its page; the "
        "mixed row (bench/mixed.py) runs one create for every 20 list reads on 4 processes of "
        "each. The create rows (bench/creates.py) interleave four sides: our create, our keyed "
        "create, the peer's create and pgbench's INSERT on the same table with as many "
        "connections (the floor), CPU per create in the notes, the server's and PostgreSQL's "
        "apart. "
        "The edge rows are read from the TLS edge section below (bench/edge/), whichever run "
        "wrote it.",
        "",
        "| Figure | Floor / baseline | Ours | Ratio | Target | |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        *[f"- {note}" for note in notes],
        *(
            [
                "- Why a target is missed, what the profiles show and what would close it: "
                "docs/decisions/performance.md (API), docs/decisions/domain-sweep.md (sweep)."
            ]
            if missed
            else []
        ),
        "",
        "Reproduce: `make bench` (needs PostgreSQL and Redis on loopback, `wrk`, and Debian's "
        "Knot DNS for the sweep's zone), or "
        "`.venv/bin/python bench/run.py --skip-domains --skip-edge` for the API part alone; "
        "`BENCH_ARGS='--seconds 5 --rounds 20'` for longer runs, `BENCH_WORKERS` for another "
        "worker count (WEB_CONCURRENCY), `--skip-servers` to keep the server table, "
        "`API_LIST_FAST_PATH=0` to serve listPets and createPet through stock DRF alone.",
        "",
        *edge,
    ]
    (ROOT / "bench" / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print("\nTargets:")
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[-1] != "-":  # a figure reported beside the targets is not one
            print(f"  {cells[-1]:6} {cells[0]}: {cells[3]} (target {cells[4]})")
