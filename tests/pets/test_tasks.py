"""The idempotency purge on a real Celery worker (the beat task, end to end)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from petstore import tasks
from petstore.apikeys.models import IdempotencyRecord
from tests.processes import Worker, service_env, wait_for


@pytest.fixture
def worker(transactional_db, settings, tmp_path):
    """`celery -A petstore worker` on the test database; always stopped."""
    process = Worker(
        service_env(settings, DB_CONN_MAX_AGE="0"), tmp_path, "pets-test", pool="solo", purge=True
    )
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()


def test_the_worker_purges_expired_idempotency_keys(worker, alice_key):
    now = timezone.now()

    def record(key, expires_at):
        return IdempotencyRecord.objects.create(
            api_key=alice_key.api_key,
            key=key,
            fingerprint="0" * 64,
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
    assert "purge_expired_idempotency_keys" in worker.log()
