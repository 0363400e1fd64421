"""createPet's benchmark: ours, plain and with an Idempotency-Key, against the FastAPI peer's
create and the physical floor of a durable create on this machine, interleaved.

Four sides, in the same order each round: `POST /v1/pets` on our server (production's web
line), the same with a fresh `Idempotency-Key` each, the peer's create (bench/peer.py: the
bearer key checked, the same fields validated with pydantic, one `INSERT ... RETURNING`, 201
with the same body and `Location`), and pgbench running the same INSERT on the same table
(bench/pgbench/insert_pet.sql, prepared, each its own committed transaction) with as many
connections as wrk has. Each side with its CPU per request, the server's process tree and
PostgreSQL's backends apart. Every 201 of the HTTP sides is checked in the table afterwards:
its id a row of that side, once (`check_created`): an acknowledged create is durable.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from bench.environment import ENV
from bench.load import Run, Side, interleaved
from bench.processes import cpu_seconds
from bench.report import KEYED_POST, VS_FLOOR_CREATE, VS_PEER, row
from bench.servers import database_backends
from bench.web import BASE, PEER, cpu_counter

SCRIPT = Path(__file__).resolve().parent / "pgbench" / "insert_pet.sql"


def postgres_cpu() -> float:
    """CPU seconds used so far by the benchmark database's PostgreSQL backends (the servers'
    connections, which live across runs)."""
    return sum(cpu_seconds(("", process) for process in database_backends()).values())


class Pgbench:
    """pgbench's INSERTs on the benchmark database, as a side of `interleaved`: committed
    creates per second as a Run, and the CPU its PostgreSQL backends used in each run
    (`cpu_ms`, per create), read while it runs: its connections end with it."""

    def __init__(self) -> None:
        self.cpu_ms: list[float] = []

    def __call__(self, *, seconds: int, connections: int) -> Run:
        argv = ["pgbench", "-n", "-M", "prepared", "-c", str(connections), "-j", "1",
                "-T", str(seconds), "-f", str(SCRIPT), ENV["DATABASE_URL"]]  # fmt: skip
        before = cpu_seconds(("", backend) for backend in database_backends())
        seen: dict[tuple[str, int], float] = {}
        with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as process:
            while process.poll() is None:
                seen.update(cpu_seconds(("", backend) for backend in database_backends()))
                time.sleep(0.1)
            out = process.stdout.read() if process.stdout else ""
        # pgbench's own backends (new), and what the servers' idle ones did meanwhile.
        used = {key: value - before.get(key, 0.0) for key, value in seen.items()}
        tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
        latency = re.search(r"latency average = ([\d.]+) ms", out)
        done = int(re.search(r"number of transactions actually processed: (\d+)", out)[1])
        ms = float(latency.group(1)) if latency else 0.0
        self.cpu_ms.append(1000 * sum(used.values()) / max(done, 1))
        return Run(tps, ms, ms, done, 0)


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


def measure(args, token: str, ours, peer) -> tuple[list[str], list[str]]:
    """The rows and notes of createPet's figures; `ours` and `peer` are the started servers."""
    stamp = int(time.time())
    common = {"seconds": args.seconds, "connections": args.connections, "rounds": args.rounds}
    pg = {"PostgreSQL": postgres_cpu}
    tags = {"ours": f"plain-{stamp}", "keyed": f"keyed-{stamp}", "peer": f"peer-{stamp}"}

    def post(url: str, tag: str, server, **env: str) -> dict:
        return {
            "url": url, "script": "post_pets.lua",
            "env": {"BENCH_TOKEN": token, "BENCH_TAG": tag, **env},
            "cpu": {"server": cpu_counter(server, database=False), **pg},
        }  # fmt: skip

    pgbench = Pgbench()
    plain, keyed, fastapi, floor = interleaved(
        ("createPet", post(BASE, tags["ours"], ours)),
        ("createPet + Idempotency-Key", post(BASE, tags["keyed"], ours, IDEMPOTENCY="1")),
        ("FastAPI peer's create", post(PEER, tags["peer"], peer)),
        ("pgbench floor", {"runner": pgbench}),
        **common,
    )
    floor.cpu = floor.cpu_parts["PostgreSQL"] = pgbench.cpu_ms[1:]  # the warm-up's left out
    rows = [
        row("`POST /v1/pets` vs FastAPI peer's create", fastapi, plain, VS_PEER),
        row(f"`POST /v1/pets` vs the pgbench floor ({args.connections} connections)", floor,
            plain, VS_FLOOR_CREATE),
        row("`POST /v1/pets`: with `Idempotency-Key` vs without", plain, keyed, KEYED_POST),
        row("`POST /v1/pets` with `Idempotency-Key` vs FastAPI peer's create", fastapi, keyed,
            None),
    ]  # fmt: skip
    notes = [cpu_note((plain, keyed, fastapi, floor))]
    for side, tag in ((plain, tags["ours"]), (keyed, tags["keyed"]), (fastapi, tags["peer"])):
        notes.append(durability_note(side, tag, args.connections))
    errors = sum(s.errors for s in (plain, keyed, fastapi))
    if errors:
        notes.append(f"The create rounds saw {errors} non-2xx answers or socket errors.")
    return rows, notes


def cpu_note(sides: tuple[Side, ...]) -> str:
    parts = []
    for side in sides:
        server, database = side.part_ms("server"), side.part_ms("PostgreSQL")
        server_text = f"server {server:.2f}, " if server is not None else ""
        parts.append(f"{side.label}: {server_text}PostgreSQL {database or 0:.2f}")
    return "CPU per create, ms (median round): " + "; ".join(parts) + "."


def durability_note(side: Side, tag: str, connections: int) -> str:
    ids = [i for r in side.runs + side.warmups for i in r.created_ids]
    c = check_created(tag, ids)
    ok = c["ids_found"] == c["distinct_ids"] == c["answers_201"] and not c["names_twice"]
    return (
        f"{side.label} (warm-up included): {c['answers_201']:,} answers 201, each with its own "
        f"id: {c['distinct_ids']:,}; rows holding those ids: {c['ids_found']:,}; rows made: "
        f"{c['rows']:,}, none twice (names stored twice: {c['names_twice']}). "
        f"{'OK' if ok else 'MISMATCH'}. The {c['rows'] - c['answers_201']:,} rows without a "
        f"201 are requests wrk cut off at the end of a run (at most {connections} per run) "
        "whose answers it never read."
    )
