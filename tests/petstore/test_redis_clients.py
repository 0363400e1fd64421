"""Every Redis client has connect and read timeouts: the ones we make come from
`petstore.redisclients.redis_client`, and the Django cache and the Celery broker are configured
with the same REDIS_TIMEOUT. A client without them waits for a hung Redis for ever."""

from __future__ import annotations

import ast
from typing import Any

from django.conf import settings

from petstore.celery import app
from petstore.redisclients import redis_client
from tests.processes import ROOT

CLIENT_FACTORIES = {"Redis", "StrictRedis", "from_url", "ConnectionPool", "Connection"}


def _clients_made(path) -> list[int]:
    """The lines of `path` that make a redis-py client or pool themselves."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = ast.unparse(node.func.value)
            if node.func.attr in CLIENT_FACTORIES and owner.split(".")[0] == "redis":
                lines.append(node.lineno)
    return lines


def test_every_redis_client_of_ours_is_made_with_the_timeouts():
    made = {
        str(path.relative_to(ROOT)): lines
        for package in ("petstore", "pets", "domains")
        for path in (ROOT / package).rglob("*.py")
        if (lines := _clients_made(path))
    }
    assert set(made) == {"petstore/redisclients.py"}


def test_a_client_waits_redis_timeout_to_connect_and_to_read(settings):
    settings.REDIS_TIMEOUT = 0.25
    client = redis_client("redis://127.0.0.1:9/0")
    kwargs = client.connection_pool.connection_kwargs
    assert (kwargs["socket_connect_timeout"], kwargs["socket_timeout"]) == (0.25, 0.25)
    waits = redis_client("redis://127.0.0.1:9/0", read_timeout=7.0).connection_pool
    assert waits.connection_kwargs["socket_timeout"] == 7.0
    assert waits.connection_kwargs["socket_connect_timeout"] == 0.25


def test_the_cache_and_the_broker_have_the_timeouts():
    timeout = settings.REDIS_TIMEOUT
    options: Any = settings.CACHES["default"]["OPTIONS"]  # the stubs type it loosely
    assert (options["socket_connect_timeout"], options["socket_timeout"]) == (timeout, timeout)
    transport = app.conf.broker_transport_options
    assert (transport["socket_connect_timeout"], transport["socket_timeout"]) == (timeout, timeout)
    policy: dict[str, float] = app.conf.task_publish_retry_policy
    assert policy["max_retries"] == 1
