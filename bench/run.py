"""`make bench`: the API against its floor and its FastAPI peer, on PostgreSQL and Redis,
served as in production.

Sets up its own database (`bench` on the local PostgreSQL, 1,000,000 pets), serves the app
as Procfile.production's web line does (granian, `python -m petstore.webserver`, persistent
database connections), drives it with wrk from a separate process on loopback, and writes
bench/results.md. Every target is a ratio against a floor or the peer measured in the same
run, alternating rounds. Then the domain sweep (bench/domains_sweep.py) and the TLS edge
(bench/edge/, a section of its own: `--edge-only` runs that alone, `--skip-edge` keeps the
one the file has). The server table (bench/servers.py) is measured too unless
`--skip-servers` keeps it (`--servers-only` measures it alone); the fairness section
(bench/fairness.py) only with `--fairness`, and kept as it stands otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import fairness, servers  # noqa: E402
from bench.edge import kept_section, measure, write_section  # noqa: E402
from bench.environment import ENV, create_database, machine, setup_django  # noqa: E402
from bench.load import Side, add_load_arguments, interleaved, paired, side_by_side, spread  # noqa: E402
from bench.processes import cpu_seconds, procfile_lines, stop, tree  # noqa: E402
from bench.servers import database_backends, start, uvicorn  # noqa: E402
from petstore.env import env_bool  # noqa: E402
from petstore.webserver import WebServerConfig  # noqa: E402

PORT = int(os.environ.get("BENCH_PORT", "8077"))
BASE = f"http://127.0.0.1:{PORT}"
PEER_PORT = PORT + 1
# The same web line keeping no list pages (API_LIST_PAGES_KEPT=0): what every request costs
# when a pet changes between every two lists.
UNKEPT_PORT = PORT + 2
PEER = f"http://127.0.0.1:{PEER_PORT}"
PETS = int(os.environ.get("BENCH_PETS", "1000000"))
# The web process as production starts it (Procfile.production's `web` line) with the
# benchmark's settings and production's worker count (petstore/webserver.py: WEB_CONCURRENCY,
# cores + 1 unless set; BENCH_WORKERS sets it here). The FastAPI peer gets as many processes.
# The server table (bench/servers.py) measures 2 x cores + 1 and cores + 1.
BENCH_WORKERS = os.environ.get("BENCH_WORKERS")
WEB_LINE = procfile_lines()["web"]
# Targets: (figure, lowest ratio met).
VS_PEER, VS_FLOOR, IDEMPOTENT_POST = 1.0, 0.9, 0.85
EDGE_KEEP_ALIVE, EDGE_FULL_HANDSHAKE = 0.95, 0.6
SWEEP_SECONDS = 15.0


def manage(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=ENV, check=True,
        capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout


def seed() -> str:
    """1,000,000 pets in three categories (only if the count differs) and a fresh API key."""
    import psycopg

    manage("migrate", "--noinput")
    manage("loaddemo")
    with psycopg.connect(ENV["DATABASE_URL"], autocommit=True) as conn:
        count = conn.execute("SELECT count(*) FROM pets_pet").fetchone()[0]
        if count != PETS:
            conn.execute("TRUNCATE pets_pet RESTART IDENTITY CASCADE")
            conn.execute(
                """
                INSERT INTO pets_pet (name, category_id, status, created_at, updated_at)
                SELECT 'pet-' || g, 1 + g %% 3,
                       (ARRAY['available', 'pending', 'sold'])[1 + (g * 7) %% 3], now(), now()
                FROM generate_series(1, %s) AS g
                """,
                (PETS,),
            )
            conn.execute("VACUUM ANALYZE pets_pet")
    return manage("createapikey", "bench", "--name", "bench").strip().splitlines()[-1]


def check_created(tag: str, ids: list[int]) -> dict:
    """What the table holds for one POST side (names start with `tag`), against its 201s."""
    import psycopg

    with psycopg.connect(ENV["DATABASE_URL"]) as conn:
        rows = conn.execute(
            "SELECT count(*), count(DISTINCT name) FROM pets_pet WHERE name LIKE %s",
            (tag + "%",),
        ).fetchone()
        found = conn.execute(
            "SELECT count(*) FROM pets_pet WHERE id = ANY(%s) AND name LIKE %s",
            (ids, tag + "%"),
        ).fetchone()[0]
    return {
        "answers_201": len(ids),
        "distinct_ids": len(set(ids)),
        "ids_found": found,  # 201s whose id is a row of this side
        "rows": rows[0],
        "names_twice": rows[0] - rows[1],
    }


def server_env() -> dict[str, str]:
    return {
        **ENV, "PORT": str(PORT), "PEER_POOL": servers.PEER_POOL,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **({"WEB_CONCURRENCY": BENCH_WORKERS} if BENCH_WORKERS else {}),
    }  # fmt: skip


def production_workers() -> int:
    """The worker count production's launcher reads from this environment."""
    os.environ.update(server_env())
    return WebServerConfig.from_environment().workers


def listens(process: psutil.Process, port: int) -> bool:
    """Whether the process has a socket listening on `port`."""
    try:
        return any(
            c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
            for c in process.net_connections("tcp")
        )
    except psutil.Error:
        return False


def start_server(**extra: str) -> tuple[subprocess.Popen, int]:
    """Procfile.production's web line, as a process manager runs it, on PORT (or `extra`'s),
    once every worker listens; with their number (what the peer is given)."""
    expected = production_workers()
    env = {**server_env(), **extra}
    port = int(env["PORT"])
    proc = start(["/bin/sh", "-c", "exec " + WEB_LINE], port, env, "/healthz")
    for _ in range(600):  # each worker listens once it has loaded the app
        listening = [p for p in tree(psutil.Process(proc.pid))[1:] if listens(p, port)]
        if len(listening) == expected:
            return proc, expected
        time.sleep(0.1)
    stop(proc)
    raise SystemExit(f"{len(listening)} workers listen, not {expected}: {WEB_LINE}")


def cpu_counter(server: subprocess.Popen) -> Callable[[], float]:
    """CPU seconds used so far by the server's process tree and the benchmark database's
    PostgreSQL backends (only the server under load keeps them busy)."""
    root = psutil.Process(server.pid)

    def used() -> float:
        return sum(cpu_seconds(("", p) for p in tree(root) + database_backends()).values())

    return used


def page_sql(token: str) -> str:
    """Run the floor and the API once each in this process and compare their page SQL.

    The hot path runs the floor's statement; DRF's path (API_LIST_FAST_PATH=0) reads
    the whole row through the ORM, so there the two statements are reported, not
    required to be equal."""
    setup_django(ENV)
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")
    fast = env_bool("API_LIST_FAST_PATH", True)
    statements = []
    for query in ("limit=100", "limit=100&status=sold"):
        pair = []
        for path in ("/bench/floor", "/v1/pets"):
            with CaptureQueriesContext(connection) as captured:
                assert client.get(f"{path}?{query}").status_code == 200
            pair.append([q["sql"] for q in captured.captured_queries if '"pets_pet"' in q["sql"]])
        if len(pair[0]) != 1 or len(pair[1]) != 1 or (fast and pair[0] != pair[1]):
            raise SystemExit(f"the floor and the API ran different SQL: {pair}")
        statements.append((pair[0][0], pair[1][0]))
    if fast:
        both = " and ".join(f"`{floor}`" for floor, _ in statements)
        return f"Same SQL, checked before measuring: floor and API both ran {both}."
    return (
        "SQL, with the hot path off: "
        + "; ".join(f"floor `{floor}`, API `{api}`" for floor, api in statements)
        + "."
    )


def deep_cursor_query(offset: int, limit: int) -> str:
    """The query of the `next` link of the page that ends at `offset`, as a client following
    links gets it.

    The seeded ids are 1..N without gaps, so the page ending at `offset` ends at id `offset`;
    the cursor is made by the API's own encoder with the server's secret key.
    """
    setup_django(ENV)
    from petstore.api.pagination import encode_cursor

    return f"limit={limit}&cursor={encode_cursor(offset)}"


def peer_deep_url(offset: int, limit: int) -> str:
    """The same page from the FastAPI peer, with its own signed cursor (its key is derived
    from SECRET_KEY, which setup_django puts in this process's environment first)."""
    setup_django(ENV)
    from bench.peer import encode_cursor

    return f"{PEER}/v1/pets?limit={limit}&cursor={encode_cursor(offset)}"


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
    """The edge's two targets, read from its section's throughput table (bench/edge/)."""
    wanted = (
        ("Edge: keep-alive, HTTPS through the edge vs plain HTTP", "Keep-alive", EDGE_KEEP_ALIVE),
        ("Edge: a full TLS handshake per request vs plain HTTP", "full handshake per request",
         EDGE_FULL_HANDSHAKE),
    )  # fmt: skip
    rows = []
    for name, label, least in wanted:
        found = [
            cells for line in section if line.startswith("| ")
            if len(cells := [c.strip() for c in line.strip("|").split("|")]) >= 4
            and cells[0].endswith(label) and not cells[0].startswith("Edge:")
            and cells[3][:1].isdigit()
        ]  # fmt: skip
        if not found:
            rows.append(f"| {name} | - | - | not measured | throughput ≥ {least} | MISSED |")
            continue
        cells = found[0]
        ratio = float(cells[3].split()[0])
        rows.append(
            f"| {name} | {cells[1]} | {cells[2]} | {cells[3]} | throughput ≥ {least} | "
            f"{verdict(ratio >= least)} |"
        )
    return rows


def kept_sweep_rows() -> list[str]:
    """The sweep's rows of bench/results.md as they stand (for a run with --skip-domains)."""
    results = ROOT / "bench" / "results.md"
    text = results.read_text() if results.exists() else ""
    return [line for line in text.splitlines() if line.startswith("| Domain sweep: ")]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_load_arguments(parser)
    parser.add_argument("--skip-domains", action="store_true")
    parser.add_argument("--skip-edge", action="store_true", help="keep the TLS edge's section")
    parser.add_argument("--edge-only", action="store_true", help="rewrite that section alone")
    parser.add_argument("--fairness", action="store_true", help="measure the fairness section")
    parser.add_argument(
        "--skip-servers", action="store_true", help="keep the server table's section"
    )
    parser.add_argument("--servers-only", action="store_true", help="rewrite that section alone")
    args = parser.parse_args()
    started = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())

    create_database()
    if args.edge_only:
        write_section(measure(args))
        return
    token = seed()
    if args.servers_only:
        servers.write_section(servers.measure(args, token, machine()))
        return
    auth = {"Authorization": f"Bearer {token}"}
    common = {"seconds": args.seconds, "connections": args.connections, "rounds": args.rounds}
    rows: list[str] = []
    notes: list[str] = []

    notes.append(page_sql(token))
    server, workers = start_server()
    unkept, _ = start_server(PORT=str(UNKEPT_PORT), API_LIST_PAGES_KEPT="0")
    peer = start(uvicorn(PEER_PORT, workers), PEER_PORT, server_env(), "/v1/pets?limit=1")
    ours_cpu, unkept_cpu, peer_cpu = cpu_counter(server), cpu_counter(unkept), cpu_counter(peer)
    try:
        name = "`GET /v1/pets?limit=100`, every page read (`API_LIST_PAGES_KEPT=0`)"
        unkept_side, fastapi = interleaved(
            ("ours, no kept pages", {"url": f"http://127.0.0.1:{UNKEPT_PORT}/v1/pets?limit=100",
                                     "headers": auth, "cpu": unkept_cpu}),
            ("FastAPI peer", {"url": f"{PEER}/v1/pets?limit=100", "cpu": peer_cpu}),
            **common,
        )  # fmt: skip
        rows.append(row(f"{name} vs FastAPI peer", fastapi, unkept_side, None))
        for name, query, floor_query, peer_url in (
            ("`GET /v1/pets?limit=100` (1M rows)", "limit=100", "limit=100",
             f"{PEER}/v1/pets?limit=100"),
            ("`GET /v1/pets?status=sold&limit=100`", "limit=100&status=sold",
             "limit=100&status=sold", f"{PEER}/v1/pets?limit=100&status=sold"),
            ("Deep page (after id 900,000, `limit=100`)",
             deep_cursor_query(900_000, 100), "limit=100&after=900000",
             peer_deep_url(900_000, 100)),
        ):  # fmt: skip
            floor, ours, fastapi = interleaved(
                ("floor", {"url": f"{BASE}/bench/floor?{floor_query}", "cpu": ours_cpu}),
                ("ours", {"url": f"{BASE}/v1/pets?{query}", "headers": auth, "cpu": ours_cpu}),
                ("FastAPI peer", {"url": peer_url, "cpu": peer_cpu}),
                **common,
            )
            rows += list_rows(name, floor, ours, fastapi)

        anon, authed = side_by_side(
            ("unauthenticated", {"url": f"{BASE}/bench/trivial-open"}),
            ("bearer", {"url": f"{BASE}/bench/trivial-auth", "headers": auth}),
            **common,
        )
        overhead = paired(anon, authed, "rps") - 1
        rows.append(
            f"| Bearer check on a trivial endpoint | {anon.rps:,.0f} req/s | "
            f"{authed.rps:,.0f} req/s | {overhead:+.0%} cost | ≤ +10% | "
            f"{verdict(overhead <= 0.10)} |"
        )

        stamp = int(time.time())
        plain, keyed = side_by_side(
            ("POST", {"script": "post_pets.lua",
                      "env": {"BENCH_TOKEN": token, "BENCH_TAG": f"plain-{stamp}"}}),
            ("POST + Idempotency-Key", {"script": "post_pets.lua",
                                        "env": {"BENCH_TOKEN": token, "IDEMPOTENCY": "1",
                                                "BENCH_TAG": f"keyed-{stamp}"}}),
            url=BASE, **common,
        )  # fmt: skip
        for side, tag in ((plain, f"plain-{stamp}"), (keyed, f"keyed-{stamp}")):
            ids = [i for r in side.runs + side.warmups for i in r.created_ids]
            c = check_created(tag, ids)
            ok = c["ids_found"] == c["distinct_ids"] == c["answers_201"] and not c["names_twice"]
            notes.append(
                f"{side.label} (warm-up included): {c['answers_201']:,} answers 201, each with "
                f"its own id: {c['distinct_ids']:,}; rows holding those ids: {c['ids_found']:,}; "
                f"rows made: {c['rows']:,}, none twice (names stored twice: "
                f"{c['names_twice']}). {'OK' if ok else 'MISMATCH'}. The "
                f"{c['rows'] - c['answers_201']:,} rows without a 201 are requests wrk cut off "
                f"at the end of a run (at most {args.connections} per run) whose answers it "
                "never read."
            )
        rows.append(row("`POST /v1/pets`: with `Idempotency-Key` vs without", plain, keyed,
                        IDEMPOTENT_POST))  # fmt: skip
        errors = sum(s.errors for s in (plain, keyed))
        if errors:
            notes.append(f"POST rounds saw {errors} non-2xx answers or socket errors.")
    finally:
        stop(peer)
        stop(unkept)
        stop(server)

    if not args.skip_domains:
        from bench.domains_sweep import sweep_rows

        rows += sweep_target(sweep_rows(ENV))
    elif kept := kept_sweep_rows():
        rows += sweep_target(kept)
        notes.append("The domain sweep's rows are kept from the run that measured them.")
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    elapsed = time.monotonic() - started

    kept_servers = (
        servers.kept_section() if args.skip_servers else servers.measure(args, token, machine())
    )
    kept_fairness = fairness.measure() if args.fairness else fairness.kept_section()
    edge = kept_section() if args.skip_edge else measure(args)
    rows += edge_rows(edge)
    write_results(rows, notes, args, elapsed, load, workers, kept_servers + kept_fairness + edge)


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
        f"and next link, no authentication) runs {workers} worker processes too. Load: wrk, one "
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
        "Reproduce: `make bench` (needs PostgreSQL and Redis on loopback and `wrk`), or "
        "`.venv/bin/python bench/run.py --skip-domains --skip-edge` for the API part alone; "
        "`BENCH_ARGS='--seconds 5 --rounds 20'` for longer runs, `BENCH_WORKERS` for another "
        "worker count (WEB_CONCURRENCY), `--skip-servers` to keep the server table, "
        "`API_LIST_FAST_PATH=0` to serve listPets through DRF's generic list alone.",
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


if __name__ == "__main__":
    main()
