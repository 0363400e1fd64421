"""`make bench`: the API against its floor and its FastAPI peer, on PostgreSQL and Redis,
served as in production.

Sets up its own database (`bench` on the local PostgreSQL, 1,000,000 pets), serves the app
as Procfile.production's web line does (granian, `python -m petstore.webserver`, persistent
database connections), drives it with wrk from a separate process on loopback, and writes
bench/results.md. Every target is a ratio against a floor or the peer measured in the same
run, alternating rounds. Then the domain sweep (bench/domains_sweep.py) and the TLS edge
(bench/edge/, a section of its own: `--edge-only` runs that alone, `--skip-edge` keeps the
one the file has). The mixed benchmark (bench/mixed.py: creates among the reads, against
the peer) runs with the API part, and so does createPet's (bench/creates.py: plain and
keyed against the peer's create and the pgbench floor). The server table
(bench/servers.py) is measured too unless `--skip-servers` keeps it (`--servers-only`
measures it alone); the fairness section (bench/fairness.py) only with `--fairness`, and
kept as it stands otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import creates, edge_faults, fairness, mixed, sections, servers  # noqa: E402
from bench.edge import kept_section, measure, write_section  # noqa: E402
from bench.environment import ENV, create_database, machine, setup_django  # noqa: E402
from bench.load import add_load_arguments, interleaved, paired, side_by_side  # noqa: E402
from bench.processes import stop  # noqa: E402
from bench.report import (  # noqa: E402
    EDGE_AT_SCALE,
    edge_rows,
    kept_rows,
    kept_sweep_note,
    list_rows,
    sweep_target,
    verdict,
    write_results,
)
from bench.servers import start, uvicorn  # noqa: E402
from bench.web import (  # noqa: E402
    BASE,
    PEER,
    PEER_PORT,
    cpu_counter,
    server_env,
    start_server,
)
from petstore.env import env_bool  # noqa: E402

PETS = int(os.environ.get("BENCH_PETS", "1000000"))


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
    with contextlib.ExitStack() as started_servers:  # each stopped, whatever fails after it
        server, workers = start_server()
        started_servers.callback(stop, server)
        peer_env = {**server_env(), "BENCH_TOKEN": token}  # the peer's create checks it
        peer = start(uvicorn(PEER_PORT, workers), PEER_PORT, peer_env, "/v1/pets?limit=1")
        started_servers.callback(stop, peer)
        ours_cpu, peer_cpu = cpu_counter(server), cpu_counter(peer)
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
            )  # fmt: skip
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

        create_rows, create_notes = creates.measure(args, token, server, peer)
        rows += create_rows
        notes += create_notes
    deep = (deep_cursor_query(900_000, 100), peer_deep_url(900_000, 100).partition("?")[2])
    rows += mixed.measure(args, token, deep)

    if not args.skip_domains:
        from bench.domains_sweep import sweep_rows

        rows += sweep_target(sweep_rows(ENV))
    elif kept := kept_rows("Domain sweep: "):
        rows += sweep_target(kept)
        notes.append(kept_sweep_note())
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    elapsed = time.monotonic() - started

    kept_servers = (
        servers.kept_section() if args.skip_servers else servers.measure(args, token, machine())
    )
    kept_fairness = fairness.measure() if args.fairness else fairness.kept_section()
    edge = kept_section() if args.skip_edge else measure(args)
    rows += edge_rows(edge)
    if at_scale := kept_rows(*EDGE_AT_SCALE):
        rows += at_scale
        notes.append(
            "The edge's rows at 1,000 to 100,000 certificates are kept from bench/edge_held.py's "
            "runs (bench/results/2026-12-07-edge-at-100000.md)."
        )
    # Written by hand from bench/access_cost.py's and bench/wsgifloor.py's runs: kept as
    # they stand.
    access = sections.kept("## Access checks", ("## Servers",))
    raw_floor = sections.kept("## Raw WSGI floor", ("## Servers",))
    kept = access + raw_floor + kept_servers + kept_fairness + edge_faults.kept_section() + edge
    write_results(rows, notes, args, elapsed, load, workers, kept)


if __name__ == "__main__":
    main()
