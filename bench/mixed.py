"""The mixed benchmark: reads and writes together, as a store that takes orders serves them.

One `POST /v1/pets` for every READS_PER_CREATE list reads (bench/wrk/mixed.lua), the reads
going round the first page, two status filters and the deep page, all `limit=100`, on
MIXED_WORKERS web processes with kept pages (`API_LIST_PAGES_KEPT`), the same without
(production's default), and the FastAPI peer with as many processes, the three
alternating round by round. Every create moves the list version and so drops every kept
page in every process: the kept pages' hit rate (pets/metrics.py's counters, summed over
the processes through the metrics store) says how much of the reads they still answer.
"""

from __future__ import annotations

import contextlib
import time

from bench.load import Side, interleaved
from bench.processes import stop
from bench.report import row
from bench.servers import start, uvicorn
from bench.web import KEPT_PAGES, PORT, cpu_counter, server_env, start_server
from petstore.metrics.store import store

READS_PER_CREATE = 20
MIXED_WORKERS = 4
KEPT_PORT, UNKEPT_PORT, PEER_PORT = PORT + 3, PORT + 4, PORT + 5
# Each process pushes its counters to the store this often; read after twice that.
FLUSH_INTERVAL = 0.5
LOOKUPS = "petstore_list_kept_page_lookups_total"
MISSES = "petstore_list_kept_page_misses_total"


def _counted() -> tuple[float, float]:
    """The kept pages' lookups and misses so far, every process's pushed (Django set up)."""
    totals = store().totals()
    return totals.get((LOOKUPS, ()), 0.0), totals.get((MISSES, ()), 0.0)


def measure(args, token: str, deep: tuple[str, str]) -> tuple[list[str], list[str]]:
    """The rows and notes of the mixed benchmark. `deep`: the deep page's query for ours
    and for the peer (each signs its own cursor)."""
    reads = ("limit=100", "limit=100&status=sold", "limit=100&status=available")
    env = {"METRICS_FLUSH_INTERVAL": str(FLUSH_INTERVAL), "WEB_CONCURRENCY": str(MIXED_WORKERS)}
    with contextlib.ExitStack() as started_servers:  # each stopped, whatever fails after it
        kept, _ = start_server(PORT=str(KEPT_PORT), API_LIST_PAGES_KEPT=KEPT_PAGES, **env)
        started_servers.callback(stop, kept)
        unkept, _ = start_server(PORT=str(UNKEPT_PORT), API_LIST_PAGES_KEPT="0", **env)
        started_servers.callback(stop, unkept)
        peer = start(uvicorn(PEER_PORT, MIXED_WORKERS), PEER_PORT, server_env(), "/v1/pets?limit=1")
        started_servers.callback(stop, peer)
        before = _counted()
        sides = []
        for label, port, server, deep_query in (
            ("kept pages", KEPT_PORT, kept, deep[0]),
            ("no kept pages", UNKEPT_PORT, unkept, deep[0]),
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
        with_pages, without, fastapi = interleaved(
            *sides, seconds=args.seconds, connections=args.connections, rounds=args.rounds
        )
        time.sleep(2 * FLUSH_INTERVAL)
        after = _counted()
    lookups, misses = after[0] - before[0], after[1] - before[1]
    return _rows(with_pages, without, fastapi), [_hit_note(lookups, misses, with_pages)]


def _rows(with_pages: Side, without: Side, fastapi: Side) -> list[str]:
    name = f"Mixed: 1 create per {READS_PER_CREATE} list reads, {MIXED_WORKERS} processes, {{}}"
    return [
        row(name.format(f"kept pages (`API_LIST_PAGES_KEPT={KEPT_PAGES}`) vs FastAPI peer"),
            fastapi, with_pages, None),
        row(name.format("every page read (`API_LIST_PAGES_KEPT=0`, the default) vs FastAPI "
                        "peer"), fastapi, without, None),
        # Kept pages would be the default only if they won here too (they did not).
        row(name.format("kept pages vs every page read"), without, with_pages, 1.0),
    ]  # fmt: skip


def _hit_note(lookups: float, misses: float, with_pages: Side) -> str:
    requests = sum(run.requests for run in with_pages.runs + with_pages.warmups)
    rate = 1 - misses / lookups if lookups else 0.0
    return (
        f"Mixed, kept pages: {lookups:,.0f} page lookups of the kept pages, {misses:,.0f} misses: "
        f"hit rate {rate:.0%} (pets/metrics.py's counters over the {MIXED_WORKERS} processes; "
        f"{requests:,} requests in all, one in {READS_PER_CREATE + 1} a create)."
    )
