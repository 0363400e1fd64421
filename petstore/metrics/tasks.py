"""The Celery tasks' failures and retries, by task name (petstore/taskfailures.py counts)."""

from __future__ import annotations

from petstore.metrics import store

TASK_FAILURES = store.counter(
    "petstore_task_failures_total",
    "Background tasks (or one domain of a batch) that raised an error, by task.",
    ["task"],
)
TASK_RETRIES = store.counter(
    "petstore_task_retries_total",
    "Background tasks that asked to run again later (a temporary failure), by task.",
    ["task"],
)
TASK_ENQUEUE_FAILURES = store.counter(
    "petstore_task_enqueue_failures_total",
    "Tasks that could not be queued (the broker was unreachable; the sweep queues the "
    "work again), by task.",
    ["task"],
)
