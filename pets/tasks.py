"""Celery tasks of the pets app: thin adapters over services."""

from __future__ import annotations

from petstore.api import idempotency
from petstore.queueing import queue_task


@queue_task(ignore_result=True)
def purge_expired_idempotency_keys() -> int:
    """Delete Idempotency-Key records past their 24 hours (scheduled by beat)."""
    return idempotency.purge_expired()
