"""The idempotency purge on a real Celery worker (the beat task, end to end)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from pets import tasks
from pets.models import IdempotencyRecord

ROOT = Path(__file__).resolve().parents[2]


def wait_for(predicate, *, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker(transactional_db, settings, tmp_path):
    """`celery -A petstore worker` on the test database; always stopped."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "petstore.settings",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "SECRET_KEY": settings.SECRET_KEY,
        "DB_CONN_MAX_AGE": "0",
    }
    log_path = tmp_path / "worker.log"
    command = [
        sys.executable, "-m", "celery", "-A", "petstore", "worker", "--pool", "solo",
        "--without-gossip", "--without-mingle", "--without-heartbeat", "--purge",
        "--loglevel", "INFO", "-n", f"pets-test-{os.getpid()}@%h",
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_for(
            lambda: process.poll() is not None or b" ready." in log_path.read_bytes(),
            timeout=60,
            what="the worker to start",
        )
        assert process.poll() is None, log_path.read_text(errors="replace")[-3000:]
        yield log_path
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)


@pytest.mark.needs_postgres
@pytest.mark.needs_redis
def test_the_worker_purges_expired_idempotency_keys(worker, alice_key):
    now = timezone.now()

    def record(key, expires_at):
        return IdempotencyRecord.objects.create(
            api_key=alice_key.api_key,
            key=key,
            fingerprint="0" * 64,
            claim_token="t",
            locked_at=now,
            expires_at=expires_at,
            response_status=201,
            response_body={},
        )

    record("expired", now - timedelta(minutes=1))
    record("live", now + timedelta(hours=23))

    tasks.purge_expired_idempotency_keys.delay()

    wait_for(
        lambda: not IdempotencyRecord.objects.filter(key="expired").exists(),
        timeout=30,
        what="the expired key to be purged",
    )
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["live"]
    assert "purge_expired_idempotency_keys" in worker.read_text(errors="replace")
