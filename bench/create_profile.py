"""Where a create's time goes, in one process: `POST /v1/pets` through petstore.wsgi's
application (no server, no network but the database's), on DRF's path and on the fast path.

For each path, after a warm-up: the CPU per create of this process (the Python: Django,
DRF, the ORM, psycopg's side), its statements with their count and wall time (each one a
round trip to PostgreSQL), and the functions that cost the most (cProfile, `--profile`).
Runs on the benchmark's database (`bench/run.py` seeds it; BENCH_DB names another).

    .venv/bin/python -m bench.create_profile [--creates 2000] [--keyed] [--profile]
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import os
import pstats
import time

from bench.environment import ENV, setup_django


def environ(token: str, n: int, keyed: bool) -> dict:
    body = f'{{"name": "profile-{n}", "categoryId": 1, "status": "available"}}'.encode()
    return {
        "REQUEST_METHOD": "POST", "SCRIPT_NAME": "", "PATH_INFO": "/v1/pets", "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Bearer {token}", "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body),
        "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
        **({"HTTP_IDEMPOTENCY_KEY": f"profile-{time.time_ns()}-{n}"} if keyed else {}),
    }  # fmt: skip


def measure(token: str, creates: int, *, fast: bool, keyed: bool, profile: bool) -> str:
    from django.conf import settings
    from django.db import connection

    from petstore.wsgi import application

    settings.API_LIST_FAST_PATH = fast
    statements: collections.Counter[str] = collections.Counter()
    waited: collections.Counter[str] = collections.Counter()

    def spy(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            shape = " ".join(sql.split()[:4])
            statements[shape] += 1
            waited[shape] += time.perf_counter() - started

    def post(n: int) -> None:
        started: list = []
        body = application(environ(token, n, keyed), lambda s, h, *_: started.append(s))
        b"".join(body)
        body.close()
        assert started[0].startswith("201"), started

    for n in range(200):  # warm-up: the key cached, the statements compiled
        post(n)
    # CPU time, not wall time: what the process spends, not its waits on the database.
    profiler = cProfile.Profile(time.process_time) if profile else None
    with connection.execute_wrapper(spy):
        cpu, wall = time.process_time(), time.perf_counter()
        if profiler:
            profiler.enable()
        for n in range(creates):
            post(n)
        if profiler:
            profiler.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    lines = [
        f"{'fast path' if fast else 'DRF'}, {'keyed' if keyed else 'plain'}: "
        f"{1e6 * cpu / creates:,.0f} µs CPU and {1e6 * wall / creates:,.0f} µs wall per create; "
        f"statements per create (each a round trip, wall µs each):"
    ]
    for shape, count in statements.most_common():
        lines.append(f"  {count / creates:.2f} x {shape} ... ({1e6 * waited[shape] / count:,.0f})")
    if profiler:
        out = io.StringIO()
        order = os.environ.get("PROFILE_SORT", "tottime")
        rows = os.environ.get("PROFILE_ROWS", "25")
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(int(rows))
        lines.append(out.getvalue())
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--creates", type=int, default=2000)
    parser.add_argument("--keyed", action="store_true", help="with an Idempotency-Key each")
    parser.add_argument("--profile", action="store_true", help="cProfile's top functions too")
    args = parser.parse_args()
    setup_django(ENV)
    from django.contrib.auth.models import User

    from petstore.apikeys.services import api_key_issue

    user, _ = User.objects.get_or_create(username="bench-profile")
    token = api_key_issue(user=user, name="profile").plaintext
    for fast in (False, True):
        print(measure(token, args.creates, fast=fast, keyed=args.keyed, profile=args.profile))


if __name__ == "__main__":
    main()
