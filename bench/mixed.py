"""The mixed benchmark: reads and writes together, as a store that takes orders serves them.

One `POST /v1/pets` for every READS_PER_CREATE list reads (bench/wrk/mixed.lua), the reads
going round the first page, two status filters and the deep page, all `limit=100`, on
MIXED_WORKERS web processes as production serves them and the FastAPI peer with as many
processes, the two alternating round by round, each with its CPU per request. The target:
at least the peer's throughput, as a store that takes orders needs.
"""

from __future__ import annotations

import contextlib

from bench.load import Side, interleaved
from bench.processes import stop
from bench.report import VS_PEER, row
from bench.servers import start, uvicorn
from bench.web import PORT, cpu_counter, server_env, start_server

READS_PER_CREATE = 20
MIXED_WORKERS = 4
OURS_PORT, PEER_PORT = PORT + 3, PORT + 4


def measure(args, token: str, deep: tuple[str, str]) -> list[str]:
    """The rows of the mixed benchmark. `deep`: the deep page's query for ours and for the
    peer (each signs its own cursor)."""
    reads = ("limit=100", "limit=100&status=sold", "limit=100&status=available")
    with contextlib.ExitStack() as started_servers:  # each stopped, whatever fails after it
        ours, _ = start_server(PORT=str(OURS_PORT), WEB_CONCURRENCY=str(MIXED_WORKERS))
        started_servers.callback(stop, ours)
        peer_env = {**server_env(), "BENCH_TOKEN": token}  # the peer's create checks it
        peer = start(uvicorn(PEER_PORT, MIXED_WORKERS), PEER_PORT, peer_env, "/v1/pets?limit=1")
        started_servers.callback(stop, peer)
        sides = []
        for label, port, server, deep_query in (
            ("ours", OURS_PORT, ours, deep[0]),
            ("FastAPI peer", PEER_PORT, peer, deep[1]),
        ):
            paths = " ".join(f"/v1/pets?{query}" for query in (*reads, deep_query))
            script_env = {
                "BENCH_TOKEN": token,
                "BENCH_TAG": f"mixed-{label.replace(' ', '-')}",
                "BENCH_READS": paths,
                "BENCH_READS_PER_CREATE": str(READS_PER_CREATE),
            }
            sides.append((label, {"url": f"http://127.0.0.1:{port}/", "script": "mixed.lua",
                                  "env": script_env, "cpu": cpu_counter(server)}))  # fmt: skip
        mine, fastapi = interleaved(
            *sides, seconds=args.seconds, connections=args.connections, rounds=args.rounds
        )
    return [_row(mine, fastapi)]


def _row(mine: Side, fastapi: Side) -> str:
    return row(
        f"Mixed: 1 create per {READS_PER_CREATE} list reads, {MIXED_WORKERS} processes, "
        "vs FastAPI peer",
        fastapi,
        mine,
        VS_PEER,
    )
