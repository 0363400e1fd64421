"""The raw WSGI floor (bench/rawwsgi.py) against the FastAPI peer, beside ours: whether any path
at the WSGI level, served as production serves the app, can reach the peer on this machine.

Four servers at once, each with production's worker count: ours (Procfile.production's web
line), the raw floor with Django's client-side binding, the raw floor with psycopg's prepared
statements (RAW_PREPARE=1), and the peer. Two benchmarks, each side interleaved with the
others round by round as `make bench` does: `GET /v1/pets?limit=100` and `POST /v1/pets`
(bench/wrk/post_pets.lua, a fresh pet each). Prints the rows, each against the peer.

    BENCH_DB=... .venv/bin/python bench/wsgifloor.py --rounds 6

`--in-process N` measures no server: each WSGI application called N times in this process
with wrk's requests, CPU per request (the raw floor's and `petstore.wsgi.served`'s), then
cProfile's cumulative top over N more through ours.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.create_profile import environ  # noqa: E402
from bench.environment import ENV, create_database, setup_django  # noqa: E402
from bench.load import add_load_arguments, interleaved  # noqa: E402
from bench.processes import stop  # noqa: E402
from bench.report import VS_PEER, row  # noqa: E402
from bench.run import seed  # noqa: E402
from bench.servers import start, uvicorn  # noqa: E402
from bench.web import BASE, PEER, PEER_PORT, PORT, cpu_counter, server_env, start_server  # noqa: E402

RAW_PORTS = (PORT + 2, PORT + 3)  # client-side binding, prepared


def in_process(token: str, n: int) -> None:
    """CPU per request of the raw floor and of ours in this process, and ours' profile."""
    os.environ["BENCH_TOKEN"] = token
    setup_django(ENV)
    from bench import rawwsgi
    from petstore.wsgi import served

    def call(app, method: str, count: int) -> None:
        statuses: list[str] = []
        for i in range(count):
            request = environ(token, i, keyed=False)
            request["HTTP_HOST"] = "127.0.0.1:8277"
            if method == "GET":
                request.update(REQUEST_METHOD="GET", QUERY_STRING="limit=100")
            body = app(request, lambda status, headers, *_: statuses.append(status))
            b"".join(body)
            if hasattr(body, "close"):
                body.close()
            assert statuses[-1][:3] in ("200", "201"), statuses[-1]

    for method in ("GET", "POST"):
        for label, app in (("raw WSGI", rawwsgi.application), ("ours", served)):
            call(app, method, 200)  # warm-up: the key cached, the statements compiled
            cpu = time.process_time()
            call(app, method, n)
            print(f"{method} {label}: {1e6 * (time.process_time() - cpu) / n:,.0f} µs CPU")
    for method in ("GET", "POST"):
        profiler = cProfile.Profile(time.process_time)
        profiler.runcall(call, served, method, n)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(45)
        print(method, out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_load_arguments(parser)
    parser.add_argument("--in-process", type=int, metavar="N", help="no servers: see above")
    args = parser.parse_args()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    started = time.monotonic()
    create_database()
    token = seed()
    if args.in_process:
        in_process(token, args.in_process)
        return
    auth = {"Authorization": f"Bearer {token}"}
    common = {"seconds": args.seconds, "connections": args.connections, "rounds": args.rounds}
    rows: list[str] = []
    with contextlib.ExitStack() as servers:
        ours, workers = start_server()
        servers.callback(stop, ours)
        env = {**server_env(), "BENCH_TOKEN": token, "WEB_CONCURRENCY": str(workers)}
        raws = []
        for port, prepare in zip(RAW_PORTS, ("0", "1"), strict=True):
            argv = [sys.executable, "-m", "bench.rawwsgi"]
            raw_env = {**env, "PORT": str(port), "RAW_PREPARE": prepare}
            raws.append(start(argv, port, raw_env, "/healthz"))
            servers.callback(stop, raws[-1])
        peer = start(uvicorn(PEER_PORT, workers), PEER_PORT, env, "/v1/pets?limit=1")
        servers.callback(stop, peer)
        named = (
            ("raw WSGI", f"http://127.0.0.1:{RAW_PORTS[0]}", raws[0]),
            ("raw WSGI, prepared", f"http://127.0.0.1:{RAW_PORTS[1]}", raws[1]),
            ("ours", BASE, ours),
            ("FastAPI peer", PEER, peer),
        )
        lists = interleaved(
            *(
                (label, {"url": f"{base}/v1/pets?limit=100", "headers": auth,
                         "cpu": cpu_counter(server)})
                for label, base, server in named
            ),
            **common,
        )  # fmt: skip
        stamp = int(time.time())
        creates = interleaved(
            *(
                (label, {"url": base, "script": "post_pets.lua", "cpu": cpu_counter(server),
                         "env": {"BENCH_TOKEN": token, "BENCH_TAG": f"wsgi{i}-{stamp}"}})
                for i, (label, base, server) in enumerate(named)
            ),
            **common,
        )  # fmt: skip
    for what, sides in (("`GET /v1/pets?limit=100`", lists), ("`POST /v1/pets`", creates)):
        peer_side = sides[-1]
        for side in sides[:-1]:
            rows.append(row(f"{what}: {side.label} vs FastAPI peer", peer_side, side, VS_PEER))
            if side.errors:
                rows.append(f"  ({side.label}: {side.errors} errors)")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    elapsed = time.monotonic() - started
    print(f"{workers} workers each; {elapsed:.0f} s; load average {load_before} / {load}")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
