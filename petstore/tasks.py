"""Celery tasks of the ground floor: the API platform's housekeeping."""

from __future__ import annotations

from petstore.api import idempotency
from petstore.queueing import queue_task


# Named in the pets app's namespace, the name the beat schedule (CELERY_BEAT_SCHEDULE) and
# the messages already queued use: a new name takes a release in which both are registered.
@queue_task(name="pets.tasks.purge_expired_idempotency_keys")
def purge_expired_idempotency_keys() -> int:
    """Delete Idempotency-Key records past their 24 hours, every /v1 resource's (scheduled
    by beat)."""
    return idempotency.purge_expired()
