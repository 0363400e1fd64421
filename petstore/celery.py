"""The Celery app, configured from Django settings under the CELERY_ namespace.

Logging: the worker logs through Django's LOGGING, so LOG_FORMAT=json gives the
same JSON lines as the web process (a receiver of `setup_logging` tells Celery to
leave logging alone). Request ids: the id of the request that queued a task
travels in the task message's headers and is the request id of every line that
task logs. This is django-guid's Celery integration in a few lines, on the one
context variable our own middleware already sets (petstore/http/requestid.py).
"""

import logging.config
import os

from celery import Celery
from celery.signals import before_task_publish, setup_logging, task_postrun, task_prerun
from django.conf import settings

from petstore.http.requestid import request_id_var

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")

# Every task queues best effort and is backed by a sweep (petstore/queueing.py).
app = Celery("petstore", task_cls="petstore.queueing:QueueTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

REQUEST_ID_HEADER = "request_id"


@setup_logging.connect
def use_django_logging(**kwargs) -> None:
    logging.config.dictConfig(settings.LOGGING)


@before_task_publish.connect
def send_request_id(headers: dict, **kwargs) -> None:
    headers.setdefault(REQUEST_ID_HEADER, request_id_var.get())


@task_prerun.connect
def restore_request_id(task, **kwargs) -> None:
    request_id = task.request.get(REQUEST_ID_HEADER) or "-"
    task.request.request_id_token = request_id_var.set(request_id)


@task_postrun.connect
def forget_request_id(task, **kwargs) -> None:
    token = task.request.get("request_id_token")
    if token is not None:
        request_id_var.reset(token)
