"""The base class of every Celery task here: queueing is best effort, the database
is the record.

Every task of this project is backed by state in the database and a scheduled
sweep that finds work which was asked for but never done (domains: a due
`next_check_at`, a stale `cert_requested_at`; pets: an hourly purge). So when a
request commits its row and then cannot reach the broker (Redis down), the
request must still succeed: the enqueue failure is logged and counted
(TaskFailure kind "enqueue"), and the sweep queues the work once the broker is
back. Nothing asked for is lost because the asking is the committed row, not
the message.

Inside a running task (a `self.retry()`), a failed publish is not swallowed: the
task fails loudly instead, and the same sweep covers it. Celery's DjangoTask adds
`delay_on_commit` / `apply_async_on_commit`, which queue after the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, overload

from celery import shared_task
from celery.contrib.django.task import DjangoTask
from kombu.exceptions import OperationalError

from petstore.taskfailures import describe, task_failure_record

log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")


class QueueTask(DjangoTask[_P, _R]):
    # A finished task whose broker connection was lost meanwhile is not a reason for the
    # worker to exit (petstore/brokerloss.py).
    Request = "petstore.brokerloss:Request"

    def apply_async(self, *args, **kwargs):
        try:
            return super().apply_async(*args, **kwargs)
        except OperationalError as exc:
            if not self.request.called_directly:
                raise  # a retry from inside a running task
            log.warning(
                "Could not queue %s (%s); the scheduled sweep will pick the work up",
                self.name,
                describe(exc),
                extra={"task": self.name},
            )
            task_failure_record(task_name=self.name, kind="enqueue", error=describe(exc))
            return None


@overload
def queue_task(
    *, bind: Literal[True], **options: Any
) -> Callable[[Callable[Concatenate[QueueTask[Any, Any], _P], _R]], QueueTask[_P, _R]]: ...
@overload
def queue_task(
    *, bind: Literal[False] = False, **options: Any
) -> Callable[[Callable[_P, _R]], QueueTask[_P, _R]]: ...
def queue_task(
    *, bind: bool = False, **options: Any
) -> Callable[[Callable[..., Any]], QueueTask[Any, Any]]:
    """`shared_task` on QueueTask (the app's task class too, petstore/celery.py).

    Celery's stubs type a task made with `base=` as the bare class, without the
    function's arguments; this decorator keeps them, so a call to `delay_on_commit`
    or a direct call is checked against the task's own signature.
    """
    return shared_task(base=QueueTask, bind=bind, **options)
