"""Celery tasks of the ground floor: the API platform's housekeeping."""

from __future__ import annotations

from petstore.api import idempotency
from petstore.queueing import queue_task


# Named as when it was the pets app's task: messages already queued and the beat schedule
# (CELERY_BEAT_SCHEDULE, and a beat still running the previous release) call it by that name.
@queue_task(name="pets.tasks.purge_expired_idempotency_keys", ignore_result=True)
def purge_expired_idempotency_keys() -> int:
    """Delete Idempotency-Key records past their 24 hours, every /v1 resource's (scheduled
    by beat)."""
    return idempotency.purge_expired()
