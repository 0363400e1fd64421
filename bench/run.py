"""`make bench`: the API against its floor, on PostgreSQL and Redis, served as in production.

Sets up its own database (`bench` on the local PostgreSQL, 1,000,000 pets),
serves the app with gunicorn (sync workers sized for 2 cores, persistent
database connections), drives it with wrk from a separate process on loopback,
and writes bench/results.md. Every target is a ratio against a floor measured
in the same run, alternating rounds. Then the domain sweep (bench/domains_sweep.py)
and the TLS edge (bench/edge/, a section of its own: `--edge-only` runs that alone,
`--skip-edge` keeps the one the file has). The fairness section (bench/fairness.py) is
measured with `--fairness` and kept as it stands otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import fairness  # noqa: E402
from bench.edge import kept_section, measure, write_section  # noqa: E402
from bench.environment import ENV, create_database, machine, setup_django  # noqa: E402
from bench.load import Side, add_load_arguments, paired, side_by_side, spread  # noqa: E402
from bench.processes import stop  # noqa: E402
from petstore.env import env_bool  # noqa: E402

PORT = int(os.environ.get("BENCH_PORT", "8077"))
BASE = f"http://127.0.0.1:{PORT}"
PETS = int(os.environ.get("BENCH_PETS", "1000000"))

# Sized for 2 cores: cores + 1 sync workers (the work is ~80 % Python CPU, ~20 % waiting
# for PostgreSQL). Sync, not gthread with one thread: a gthread worker keeps accepting
# connections while its only thread is busy (gunicorn #2191, #3433), so a run's 8
# connections landed on 1 to 4 of the workers at random and rounds of the same code
# differed by 2x. A sync worker takes one connection at a time (behind a buffering proxy
# in production, as gunicorn advises). Measured: docs/decisions/performance.md.
GUNICORN = [
    str(ROOT / ".venv/bin/gunicorn"),
    "petstore.wsgi",
    "--bind", f"127.0.0.1:{PORT}",
    "--worker-class", os.environ.get("BENCH_WORKER_CLASS", "sync"),
    "--workers", os.environ.get("BENCH_WORKERS", "3"),
    "--threads", os.environ.get("BENCH_THREADS", "1"),
    "--log-level", "warning",
]  # fmt: skip


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


def start_server() -> subprocess.Popen:
    with socket.socket() as probe:  # another server on the port would be measured instead
        if probe.connect_ex(("127.0.0.1", PORT)) == 0:
            raise SystemExit(f"port {PORT} is already in use (BENCH_PORT)")
    proc = subprocess.Popen(GUNICORN, cwd=ROOT, env=ENV, start_new_session=True)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{BASE}/healthz", timeout=1)  # noqa: S310 - loopback
            if proc.poll() is not None:
                raise SystemExit("gunicorn exited")
            return proc
        except OSError:
            time.sleep(0.2)
    stop(proc)
    raise SystemExit("gunicorn did not start")


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


def deep_cursor_url(offset: int, limit: int) -> str:
    """The `next` link of the page that ends at `offset`, as a client following links gets it.

    The seeded ids are 1..N without gaps, so the page ending at `offset` ends at id `offset`;
    the cursor is made by the API's own encoder with the server's secret key.
    """
    setup_django(ENV)
    from petstore.api.pagination import encode_cursor

    return f"{BASE}/v1/pets?limit={limit}&cursor={encode_cursor(offset)}"


def row(name: str, floor: Side, ours: Side, target: str, kind: str = "rps") -> str:
    attr = "rps" if kind == "rps" else "p50_ms"
    ratio = paired(ours, floor, attr)
    low, high = spread(ours, floor, attr)
    shown = f"{ratio:.2f} (rounds {low:.2f}–{high:.2f})"
    if kind == "rps":
        return (
            f"| {name} | {floor.rps:,.0f} req/s (p99 {floor.p99_ms:.1f} ms) | "
            f"{ours.rps:,.0f} req/s (p99 {ours.p99_ms:.1f} ms) | {shown} | {target} | "
            f"{'met' if ratio >= float(target.split()[-1]) else 'MISSED'} |"
        )
    return (
        f"| {name} | median {floor.p50_ms:.2f} ms | median {ours.p50_ms:.2f} ms | {shown} | "
        f"{target} | {'met' if ratio <= float(target.split()[-1]) else 'MISSED'} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_load_arguments(parser)
    parser.add_argument("--skip-domains", action="store_true")
    parser.add_argument("--skip-edge", action="store_true", help="keep the TLS edge's section")
    parser.add_argument("--edge-only", action="store_true", help="rewrite that section alone")
    parser.add_argument("--fairness", action="store_true", help="measure the fairness section")
    args = parser.parse_args()
    started = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())

    create_database()
    if args.edge_only:
        write_section(measure(args))
        return
    token = seed()
    auth = {"Authorization": f"Bearer {token}"}
    common = {"seconds": args.seconds, "connections": args.connections, "rounds": args.rounds}
    rows: list[str] = []
    notes: list[str] = []

    notes.append(page_sql(token))
    server = start_server()
    try:
        floor, ours = side_by_side(
            ("floor", {"url": f"{BASE}/bench/floor?limit=100"}),
            ("ours", {"url": f"{BASE}/v1/pets?limit=100", "headers": auth}),
            **common,
        )
        rows.append(row("`GET /v1/pets?limit=100` (1M rows)", floor, ours, "throughput ≥ 0.8"))

        floor, ours = side_by_side(
            ("floor", {"url": f"{BASE}/bench/floor?limit=100&status=sold"}),
            ("ours", {"url": f"{BASE}/v1/pets?limit=100&status=sold", "headers": auth}),
            **common,
        )
        rows.append(row("`GET /v1/pets?status=sold&limit=100`", floor, ours, "throughput ≥ 0.8"))

        first, deep = side_by_side(
            ("page 1", {"url": f"{BASE}/v1/pets?limit=100", "headers": auth}),
            ("offset 900,000", {"url": deep_cursor_url(900_000, 100), "headers": auth}),
            **common,
        )
        rows.append(
            row("Deep paging: offset 900,000 vs page 1", first, deep, "latency ≤ 1.2", "p50")
        )

        anon, authed = side_by_side(
            ("unauthenticated", {"url": f"{BASE}/bench/trivial-open"}),
            ("bearer", {"url": f"{BASE}/bench/trivial-auth", "headers": auth}),
            **common,
        )
        overhead = paired(anon, authed, "rps") - 1
        rows.append(
            f"| Bearer check on a trivial endpoint | {anon.rps:,.0f} req/s | "
            f"{authed.rps:,.0f} req/s | +{overhead:.0%} cost | ≤ +10% | "
            f"{'met' if overhead <= 0.10 else 'MISSED'} |"
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
        rows.append(
            f"| `POST /v1/pets` without / with `Idempotency-Key` | {plain.rps:,.0f} req/s "
            f"(p99 {plain.p99_ms:.1f} ms) | {keyed.rps:,.0f} req/s (p99 {keyed.p99_ms:.1f} ms) | "
            f"{paired(keyed, plain, 'rps'):.2f} | reported | - |"
        )
        errors = sum(s.errors for s in (plain, keyed))
        if errors:
            notes.append(f"POST rounds saw {errors} non-2xx answers or socket errors.")
    finally:
        stop(server)

    if not args.skip_domains:
        from bench.domains_sweep import sweep_rows

        rows += sweep_rows(ENV)
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    elapsed = time.monotonic() - started

    kept_fairness = fairness.measure() if args.fairness else fairness.kept_section()
    edge = kept_section() if args.skip_edge else measure(args)
    write_results(rows, notes, args, elapsed, load, kept_fairness + edge)


def write_results(
    rows: list[str], notes: list[str], args, elapsed: float, load: str, edge: list[str]
) -> None:
    missed = any("MISSED" in row for row in rows)
    lines = [
        "# Benchmark results",
        "",
        f"Run on {dt.date.today().isoformat()} by `make bench` in {elapsed:.0f} s, on "
        f"{machine()}. Load average before / after the run: {load}.",
        f"Server: `{' '.join(GUNICORN[1:])}`, listPets hot path "
        f"{'on' if env_bool('API_LIST_FAST_PATH', True) else 'off'} "
        "(`API_LIST_FAST_PATH`), PostgreSQL on loopback, Redis cache, "
        "persistent DB connections (CONN_MAX_AGE=600), rate limits off. Load: wrk, one "
        f"thread, {args.connections} connections, {args.rounds} rounds of {args.seconds} s per "
        "side, the two sides alternating after a 2 s warm-up each. Absolute figures are each "
        "side's median round; the ratio is the median of the per-round ratios (their lowest "
        "and highest in brackets).",
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
        "`BENCH_ARGS='--seconds 5 --rounds 20'` for longer runs, `BENCH_WORKER_CLASS`, "
        "`BENCH_WORKERS` and `BENCH_THREADS` to try another gunicorn sizing, "
        "`API_LIST_FAST_PATH=0` to serve listPets through DRF's generic list alone.",
        "",
        *edge,
    ]
    (ROOT / "bench" / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
