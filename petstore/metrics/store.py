"""Counters and histograms that add up across every process and host.

Each family is a prometheus-client object in this module's registry, incremented in the
process that counts (a web request, a worker's task, an edge lookup): an increment is a
few hundred nanoseconds under a lock, never a network round trip. Where the totals of all
processes meet depends on METRICS_STORE:

- `redis` (production: several web, worker and edge processes on one host or many): the
  process's own values are a buffer. A thread pushes what changed since its last push to
  one Redis hash every METRICS_FLUSH_INTERVAL seconds (HINCRBYFLOAT in one MULTI), and a
  scrape pushes its own process's first, then reads the hash. A process that dies loses
  at most the last interval's increments; a Redis that is down keeps them here until it
  is back.
- `multiprocess` (one host, by choice: METRICS_STORE): prometheus-client's multiprocess mode,
  one memory-mapped file per process under METRICS_DIR (settings point
  PROMETHEUS_MULTIPROC_DIR there before prometheus-client is imported); a scrape sums the
  files. The files of processes gone stay: their counts still count.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

import redis
from django.conf import settings
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector

from petstore.redisclients import redis_client

log = logging.getLogger(__name__)

# The families defined by any module of the project; every process defines all of them
# (the apps' ready() imports the modules), so any process can write out any family.
REGISTRY = CollectorRegistry(auto_describe=True)
# The Redis hash of every process's totals: field = JSON [sample name, sorted labels].
REDIS_KEY = "petstore:metrics"

Key = tuple[str, tuple[tuple[str, str], ...]]


class StoreUnavailable(Exception):
    """The totals cannot be read now (Redis down): the scrape fails rather than show counts
    that look like a reset."""


def _made_ready() -> None:
    """In multiprocess mode a family writes its file when it is defined: the folder first."""
    if settings.METRICS_STORE == "multiprocess":
        Path(settings.METRICS_DIR).mkdir(parents=True, exist_ok=True)


def counter(name: str, documentation: str, labelnames: Sequence[str] = ()) -> Counter:
    _made_ready()
    return Counter(name, documentation, labelnames, registry=REGISTRY)


def histogram(
    name: str, documentation: str, buckets: Sequence[float], labelnames: Sequence[str] = ()
) -> Histogram:
    _made_ready()
    return Histogram(name, documentation, labelnames, registry=REGISTRY, buckets=buckets)


def _samples(families: Iterable[Metric]) -> dict[Key, float]:
    # `_created` is when this process first counted: meaningless once processes are summed.
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


class Store(Protocol):
    def start(self) -> None:
        """Called once in each process that counts (and again after a fork)."""

    def flush(self) -> None: ...

    def totals(self) -> dict[Key, float]: ...


class RedisStore:
    def __init__(self, url: str, interval: float) -> None:
        self.client = redis_client(url)
        self.interval = interval
        self.lock = threading.Lock()
        self.pushed: dict[Key, float] = {}
        self.failing = False
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="metrics-flush", daemon=True)
            self.thread.start()
            atexit.register(self.flush)
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child (a prefork pool process, a web worker forked after the app loaded) starts
        from its parent's values, which the parent pushes: it pushes only its own."""
        self.lock = threading.Lock()
        self.pushed = _samples(REGISTRY.collect())
        self.thread = threading.Thread(target=self._run, name="metrics-flush", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            self.flush()

    def flush(self) -> None:
        """Push what changed since the last push; on failure keep it for the next one."""
        with self.lock:
            now = _samples(REGISTRY.collect())
            # A series seen for the first time is pushed even at 0: a histogram's buckets
            # must all be there.
            changed = {k: v for k, v in now.items() if self.pushed.get(k) != v}
            if not changed:
                return
            pipe = self.client.pipeline(transaction=True)
            for key, value in changed.items():
                pipe.hincrbyfloat(REDIS_KEY, json.dumps(key), value - self.pushed.get(key, 0.0))
            try:
                pipe.execute()
            except redis.RedisError as exc:
                if not self.failing:  # once per outage, not at every interval
                    log.warning("Could not push metrics to Redis (%s); keeping them", exc)
                self.failing = True
                return
            self.failing = False
            self.pushed.update(changed)

    def totals(self) -> dict[Key, float]:
        self.flush()
        try:
            raw = self.client.hgetall(REDIS_KEY)
        except redis.RedisError as exc:
            raise StoreUnavailable(f"Redis: {exc}") from exc
        totals: dict[Key, float] = {}
        for field, value in raw.items():
            name, labels = json.loads(field)
            totals[(name, tuple((k, v) for k, v in labels))] = float(value)
        return totals


class MultiprocessStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def start(self) -> None:
        _made_ready()

    def flush(self) -> None:
        """Every increment is already in this process's file."""

    def totals(self) -> dict[Key, float]:
        return _samples(MultiProcessCollector(None, path=str(self.directory)).collect())


@cache
def store() -> Store:
    if settings.METRICS_STORE == "redis":
        return RedisStore(settings.REDIS_URL, settings.METRICS_FLUSH_INTERVAL)
    return MultiprocessStore(Path(settings.METRICS_DIR))


def _sample_order(item: tuple[Key, float]) -> tuple[object, ...]:
    (name, labels), _ = item
    others = tuple(pair for pair in labels if pair[0] != "le")
    le = dict(labels).get("le")
    return (others, name, float(le) if le is not None else 0.0)


def stored_families() -> Iterator[Metric]:
    """Every family of REGISTRY with the totals of all processes (a labelled family that
    nothing counted yet is there, without samples)."""
    totals = store().totals()
    by_family: dict[str, list[tuple[Key, float]]] = {}
    for family in REGISTRY.collect():
        by_family[family.name] = []
    for (name, labels), value in totals.items():
        family_name = _family_of(name)
        if family_name in by_family:
            by_family[family_name].append(((name, labels), value))
    for family in REGISTRY.collect():
        metric = Metric(family.name, family.documentation, family.type, family.unit)
        for (name, labels), value in sorted(by_family[family.name], key=_sample_order):
            metric.add_sample(name, dict(labels), value)
        yield metric


SUFFIXES = ("_total", "_bucket", "_count", "_sum")


def _family_of(sample_name: str) -> str:
    for suffix in SUFFIXES:
        if sample_name.endswith(suffix):
            return sample_name.removesuffix(suffix)
    return sample_name
