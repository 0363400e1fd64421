"""What counting one HTTP answer costs the request that is counted
(docs/decisions/metrics.md): `observe()` alone, and the whole middleware (the route of a
resolved request, then `observe()`), in microseconds, on this machine.

    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/metrics_cost.py
"""

from __future__ import annotations

import os
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
os.environ.setdefault("SECRET_KEY", "bench")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.test import RequestFactory  # noqa: E402
from django.urls import resolve  # noqa: E402

from petstore.metrics import store  # noqa: E402
from petstore.metrics.http import RequestMetricsMiddleware, observe  # noqa: E402

N = 200_000


def per_call(function, number: int = N) -> float:
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def main() -> None:
    request = RequestFactory().get("/v1/pets")
    request.resolver_match = resolve("/v1/pets")
    response = HttpResponse()
    middleware = RequestMetricsMiddleware(lambda _: response)
    print(f"store: {settings.METRICS_STORE}")
    observed = per_call(lambda: observe("v1/pets", 200, 0.003))
    print(f"observe(route, status, seconds): {observed:.2f} µs")
    print(f"middleware around a view: {per_call(lambda: middleware(request)):.2f} µs")
    print(f"a flush (this process's series): {per_call(store.store().flush, 200):.0f} µs")


if __name__ == "__main__":
    main()
