"""Beat's routine tasks are DEBUG lines on a real worker's console (petstore/routinelogs.py):
`make run`'s hints and production's log keep what says something happened."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from domains import tasks
from petstore.routinelogs import routine_tasks
from tests.processes import Worker, service_env, wait_for


def test_every_task_beat_sends_is_routine():
    """Read from beat's schedule, so a task added to it is routine without another list."""
    scheduled = {entry["task"] for entry in django_settings.CELERY_BEAT_SCHEDULE.values()}
    assert routine_tasks() == scheduled
    assert tasks.dispatch_deliveries.name in scheduled
    assert tasks.check_domains.name not in scheduled


@pytest.mark.parametrize(("level", "routine_shown"), [("INFO", False), ("DEBUG", True)])
def test_the_worker_logs_a_routine_task_only_at_debug_and_other_tasks_as_ever(
    transactional_db, settings, tmp_path, level, routine_shown
):
    worker = Worker(
        service_env(settings, LOG_LEVEL=level),
        tmp_path,
        f"routine-{level}",
        pool="solo",
        purge=True,
    )
    try:
        worker.wait_ready()
        tasks.dispatch_deliveries.delay()
        tasks.check_domains.delay([])  # after it, on one solo worker: the routine one ran
        wait_for(lambda: "check_domains" in worker.log() and "succeeded" in worker.log(),
                 timeout=60, what="the batch's success line")  # fmt: skip
    finally:
        worker.stop()
    lines = worker.log().splitlines()
    batch = [line for line in lines if f"{tasks.check_domains.name}[" in line]
    routine = [line for line in lines if f"{tasks.dispatch_deliveries.name}[" in line]
    assert any(" INFO " in line and "received" in line for line in batch), batch
    assert any(" INFO " in line and "succeeded" in line for line in batch), batch
    if routine_shown:
        assert any(" DEBUG " in line and "received" in line for line in routine), routine
        assert any(" DEBUG " in line and "succeeded" in line for line in routine), routine
    else:
        assert routine == []
