"""The Celery app, configured from Django settings under the CELERY_ namespace."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")

# Every task queues best effort and is backed by a sweep (petstore/queueing.py).
app = Celery("petstore", task_cls="petstore.queueing:QueueTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
