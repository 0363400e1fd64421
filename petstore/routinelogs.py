"""Beat's routine tasks, logged by the worker at DEBUG: a task beat sends every few seconds
(the deliveries' dispatch every 15 s, the sweep every minute) would otherwise put two INFO
lines a run on the worker's console, `make run`'s hints pushed out of view within minutes,
and production's log filled with lines that say nothing happened. A level, not silence:
`LOG_LEVEL=DEBUG` shows them; a retry, a failure or a task's own lines stay as they are.
"""

from __future__ import annotations

import logging

from django.conf import settings


def routine_tasks() -> frozenset[str]:
    """The names of the tasks beat sends (CELERY_BEAT_SCHEDULE)."""
    return frozenset(str(entry["task"]) for entry in settings.CELERY_BEAT_SCHEDULE.values())


class RoutineTaskLines(logging.Filter):
    """Makes the INFO line of a routine task's receipt or success a DEBUG line, let through
    only where DEBUG is logged. On Celery's loggers of those lines (LOGGING: its
    `celery.worker.strategy` and `celery.app.trace`), which pass the task's name in the
    record's arguments, a dict."""

    def __init__(self) -> None:
        super().__init__()
        self.routine = routine_tasks()

    def filter(self, record: logging.LogRecord) -> bool:
        arguments = record.args
        if record.levelno != logging.INFO or not isinstance(arguments, dict):
            return True
        if arguments.get("name") not in self.routine:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger().isEnabledFor(logging.DEBUG)
