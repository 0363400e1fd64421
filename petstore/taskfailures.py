"""Counting task failures per kind, from Celery's `task_failure` signal and from
enqueues that could not reach the broker (petstore.queueing), and task retries.

Each failure is counted twice over, by this one function: in the metrics
(petstore_task_failures_total, petstore_task_enqueue_failures_total: rates, alerts,
across processes) and in a row per (task, kind) that keeps the last error's text and
time for staff in the admin, which a metric cannot hold and which works with no
Prometheus or Sentry in place (`make run`). Retries are only counted in the metrics.

The count is an atomic `count = count + 1` UPDATE; the first failure of a kind
creates its row, and a concurrent first failure that loses the race on the
unique constraint falls back to the UPDATE. Counting never raises: a failure to
count is logged, it must not hide the failure being counted.
"""

from __future__ import annotations

import logging

from celery.signals import task_failure, task_retry
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from petstore.metrics.tasks import TASK_ENQUEUE_FAILURES, TASK_FAILURES, TASK_RETRIES

log = logging.getLogger(__name__)
ERROR_MAX = 2000


def describe(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    return f"{type(exc).__name__}: {exc}"[:ERROR_MAX]


def task_failure_record(*, task_name: str, kind: str, error: str = "") -> None:
    from petstore.models import TaskFailure

    metric = TASK_ENQUEUE_FAILURES if kind == "enqueue" else TASK_FAILURES
    metric.labels(task=task_name).inc()
    now = timezone.now()
    bump = {"count": F("count") + 1, "last_failed_at": now, "last_error": error[:ERROR_MAX]}
    rows = TaskFailure.objects.filter(task_name=task_name, kind=kind)
    try:
        if rows.update(**bump):
            return
        try:
            with transaction.atomic():
                TaskFailure.objects.create(
                    task_name=task_name, kind=kind, count=1, last_failed_at=now, last_error=error
                )
        except IntegrityError:  # another process created it a moment ago
            rows.update(**bump)
    except Exception:  # noqa: BLE001 - never let counting break the caller
        log.exception("Could not count a %s failure of %s", kind, task_name)


def _on_task_failure(sender=None, exception=None, **kwargs) -> None:
    name = getattr(sender, "name", None) or str(sender)
    task_failure_record(task_name=name, kind="failed", error=describe(exception))


def _on_task_retry(sender=None, **kwargs) -> None:
    TASK_RETRIES.labels(task=getattr(sender, "name", None) or str(sender)).inc()


def connect() -> None:
    task_failure.connect(_on_task_failure, weak=False, dispatch_uid="petstore.task_failure_count")
    task_retry.connect(_on_task_retry, weak=False, dispatch_uid="petstore.task_retry_count")
