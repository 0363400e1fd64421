"""The Redis store pushes only what changed, keeps what it could not push while Redis is
down and pushes it once Redis is back; a scrape meanwhile fails instead of showing counts
that look like a reset."""

from __future__ import annotations

import json

import pytest
import redis

from petstore.metrics import store
from petstore.metrics.http import REQUESTS, observe
from tests.processes import OwnRedis

SERIES = ("petstore_http_requests_total", (("route", "store-test"), ("status", "200")))


@pytest.fixture
def own_redis(tmp_path):
    server = OwnRedis(tmp_path).start()
    yield server
    server.kill()


def pushed(server: OwnRedis) -> float:
    raw = redis.Redis(port=server.port).hget(store.REDIS_KEY, json.dumps(SERIES))
    return float(raw) if raw is not None else 0.0


def test_counts_kept_while_redis_is_down_are_pushed_when_it_is_back(own_redis):
    REQUESTS.labels(route="store-test", status="200")  # the series exists before this store
    pusher = store.RedisStore(own_redis.url(0), interval=3600)
    pusher.flush()  # what this process counted before: not this test's
    start = pushed(own_redis)
    observe("store-test", 200, 0.01)
    observe("store-test", 200, 0.01)
    pusher.flush()
    assert pushed(own_redis) == start + 2
    pusher.flush()  # nothing changed: nothing added
    assert pushed(own_redis) == start + 2

    own_redis.kill()
    observe("store-test", 200, 0.01)
    pusher.flush()  # fails, kept
    with pytest.raises(store.StoreUnavailable):
        pusher.totals()
    own_redis.start()
    assert pushed(own_redis) == 0  # a new, empty Redis on the same port
    pusher.flush()
    assert pushed(own_redis) == 1  # what was kept, and only that: the rest went with Redis


@pytest.mark.django_db
def test_a_scrape_while_the_store_is_down_answers_503(client, settings, own_redis, monkeypatch):
    settings.METRICS_TOKEN = "t"
    down = store.RedisStore(own_redis.url(0), interval=3600)
    own_redis.kill()
    monkeypatch.setattr(store, "store", lambda: down)  # this process's store, with Redis down
    response = client.get("/metrics", HTTP_HOST="10.0.0.7", HTTP_AUTHORIZATION="Bearer t")
    assert response.status_code == 503
    assert b"petstore_" not in response.content
