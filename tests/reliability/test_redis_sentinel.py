"""Redis Sentinel (REDIS_SENTINELS): every Redis client finds the primary through the
sentinels, and a failover under load runs every task sent outside it once, none twice but one
the worker took while it was under way, and fails requests only while it lasts.

A deployment of the test's own (tests/reliability/sentinel.py): a primary, a replica, three
sentinels. A worker, the web server and a process sending tasks run on production's settings
with REDIS_SENTINELS and URLs that name the primary (`redis://petstore/1`), as an operator
writes them.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from datetime import datetime

import pytest
import redis
import requests

from petstore.apikeys.services import api_key_issue
from tests.processes import ROOT, Worker, service_env, wait_for, web_server, workers_running
from tests.reliability.sentinel import NAME, SentinelDeployment

# Quick, harmless (a batch of no domains), on the checks queue, and not one beat sends, whose
# "succeeded" line the worker logs at DEBUG (petstore/routinelogs.py).
TASK = "domains.tasks.check_domains"

# Sends TASK with ids 0, 1, 2... until the file named by its argument exists, one line per
# attempt: `sent <id> <time>` or `failed <id> <time> <error>`.
SENDER = f"""
import sys, time, uuid
from pathlib import Path
from petstore.celery import app
stop = Path(sys.argv[2])  # after `-c` and this code
n = 0
while not stop.exists() and n < 5000:
    task_id, began = f"sentinel-{{n}}", time.time()
    try:
        app.send_task("{TASK}", args=[[]], task_id=task_id)
    except Exception as exc:
        print("failed", task_id, began, type(exc).__name__, flush=True)
    else:
        print("sent", task_id, began, flush=True)
    n += 1
    time.sleep(0.05)
"""


@pytest.fixture
def sentinel(tmp_path):
    deployment = SentinelDeployment(tmp_path).start()
    try:
        yield deployment
    finally:
        deployment.stop()


def _sentinel_env(settings, deployment: SentinelDeployment, **extra: str) -> dict[str, str]:
    return service_env(
        settings,
        REDIS_URL=f"redis://{NAME}/0",
        CELERY_BROKER_URL=f"redis://{NAME}/1",
        REDIS_SENTINELS=deployment.addresses,
        LOG_FORMAT="plain",
        **extra,
    )


# Runs its first argument as Python code after Django's set-up, as `manage.py shell -c` does.
SHELL = "import sys, django; django.setup(); exec(sys.argv[1])"


def _manage_shell(env: dict[str, str], code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", SHELL, code, *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_every_redis_client_finds_the_primary_through_the_sentinels(settings, sentinel):
    """The cache, our own clients, the broker and beat's RedBeat client, each built from the
    settings by a process of its own, reach the server the sentinels name."""
    code = """
from django.conf import settings
from django.core.cache import cache
from redbeat.schedulers import get_redis
from petstore.celery import app
from petstore.redisclients import redis_client
cache.set("sentinel-probe", 1)
ports = [
    redis_client(settings.REDIS_URL).info("server")["tcp_port"],
    get_redis(app).info("server")["tcp_port"],
]
with app.connection_for_write() as connection:
    ports.append(connection.default_channel.client.info("server")["tcp_port"])
print(*ports)
"""
    shell = _manage_shell(_sentinel_env(settings, sentinel), code)
    out, _ = shell.communicate(timeout=120)
    assert shell.returncode == 0
    assert out.split() == [str(sentinel.primary)] * 3
    # The cache's key is on the primary too (Django's key: `:<version>:<key>`).
    assert redis.Redis(port=sentinel.primary, db=0).get(":1:sentinel-probe") is not None


@pytest.mark.timeout(400)
def test_a_failover_under_load_runs_each_task_once_and_fails_requests_only_during_it(
    transactional_db, settings, sentinel, tmp_path, alice
):
    env = _sentinel_env(settings, sentinel)
    key = api_key_issue(user=alice).plaintext
    stop_file = tmp_path / "stop-sending"
    requests_made: list[tuple[float, bool]] = []  # (when it began, answered 200)
    stop_requests = threading.Event()

    def load(base: str) -> None:
        paths = ["/v1/pets", "/readyz"]
        while not stop_requests.is_set():
            for path in paths:
                began = time.time()
                try:
                    ok = (
                        requests.get(
                            base + path, headers={"Authorization": f"Bearer {key}"}, timeout=10
                        ).status_code
                        == 200
                    )
                except requests.RequestException:
                    ok = False
                requests_made.append((began, ok))
            time.sleep(0.05)

    worker = Worker(env, tmp_path, "sentinel")
    with web_server(env, tmp_path) as base, workers_running(worker):
        loader = threading.Thread(target=load, args=(base,))
        loader.start()
        sender = _manage_shell(env, SENDER, str(stop_file))
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(sender.stdout or []))
        reader.start()
        try:
            wait_for(lambda: len(lines) >= 40, timeout=60, what="tasks sent before the failover")
            began = time.time()
            old = sentinel.failover()
            wait_for(
                lambda: sentinel.primary_port(sentinel.sentinels[0]) != old,
                timeout=60,
                what="the sentinels to promote the replica",
            )
            wait_for(sentinel.settled, timeout=120, what="the old primary to follow the new one")
            settled = time.time()
            after = len(lines)
            wait_for(lambda: len(lines) >= after + 40, timeout=60, what="tasks sent after it")
        finally:
            stop_file.touch()
            sender.wait(timeout=60)
            reader.join(timeout=10)
            stop_requests.set()
            loader.join(timeout=30)

        attempts = [line.split() for line in lines]
        sent = {task_id: float(at) for outcome, task_id, at, *_ in attempts if outcome == "sent"}
        failed_at = [float(at) for outcome, _, at, *_ in attempts if outcome == "failed"]
        # Replication is asynchronous: a send the old primary took after the replica's
        # promotion, before the sentinels turned it into a replica, is gone with its data (the
        # sweep queues that work again, petstore/queueing.py). Every other send is run.
        outside = {task_id for task_id, at in sent.items() if not began <= at <= settled}

        def executed() -> dict[str, int]:
            found = re.findall(rf"Task {re.escape(TASK)}\[(sentinel-\d+)\] succeeded", worker.log())
            return {task_id: found.count(task_id) for task_id in set(found)}

        def first_taken() -> dict[str, float]:
            """When the worker first took each task (its log's local time)."""
            taken: dict[str, float] = {}
            pattern = rf"^(\S+ \S+) \w+ \S+ \[-\] Task {re.escape(TASK)}\[(sentinel-\d+)\] received"
            for at, task_id in re.findall(pattern, worker.log(), re.M):
                when = datetime.strptime(at, "%Y-%m-%d %H:%M:%S,%f").timestamp()
                taken.setdefault(task_id, when)
            return taken

        wait_for(
            lambda: outside <= set(executed()),
            timeout=120,
            what="the worker to run every task sent before and after the failover",
        )
        time.sleep(2)  # a task run twice would be logged by now
        # A task taken from the old primary while the failover was under way may still be
        # queued on the replica it promotes (replication is asynchronous), and is taken
        # again there (taken up to a second before it too, as for the requests below: the
        # replica's lag); the tasks are idempotent. Any other task runs once.
        runs, taken = executed(), first_taken()
        assert set(runs) <= set(taken)
        twice = {task_id for task_id, count in runs.items() if count > 1}
        assert {
            task_id: taken.get(task_id)
            for task_id in twice
            if not began - 1 <= taken.get(task_id, 0) <= settled
        } == {}
        assert set(executed()) <= set(sent)

    assert sentinel.primary_port(sentinel.sentinels[0]) == sentinel.replica
    # Only what began during the failover failed; before and after, everything answered.
    assert all(began <= at <= settled for at in failed_at), (began, settled, failed_at)
    failed_requests = [at for at, ok in requests_made if not ok]
    assert all(began - 1 <= at <= settled for at in failed_requests), failed_requests
    assert any(ok for at, ok in requests_made if at > settled)
    assert any(at > settled for at in sent.values())
