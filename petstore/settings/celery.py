"""Celery (petstore/celery.py reads the CELERY_ names): the broker, the queues and the beat."""

from __future__ import annotations

from petstore.env import Section
from petstore.settings.core import VAR_DIR
from petstore.settings.data import (
    EMBEDDED_REDIS_SOCKET,
    REDIS_TIMEOUT,
    REDIS_URL,
    REDIS_URL_GIVEN,
)
from petstore.settings.domains import DOMAINS_SWEEP_INTERVAL

env = Section("Celery")
CELERY_BROKER_URL = env.text(
    "CELERY_BROKER_URL",
    "",
    "The Celery broker (kombu's URL: a unix socket is `redis+socket://`).",
    shown="`REDIS_URL`; with neither set, the embedded Redis's database 1",
    example="redis://127.0.0.1:6379/1",
    secret=True,
) or (REDIS_URL if REDIS_URL_GIVEN else f"redis+socket://{EMBEDDED_REDIS_SOCKET}?virtual_host=1")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 3600,
    "socket_connect_timeout": REDIS_TIMEOUT,
    "socket_timeout": REDIS_TIMEOUT,
}
# One retry of a publish that failed: a pooled connection that a restarted Redis closed is
# opened again; a Redis that does not answer costs two REDIS_TIMEOUTs, and the sweep queues
# the work later (petstore/queueing.py). Celery's default (3 retries) would hold a request 4.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.integer(
    "CELERY_TASK_TIME_LIMIT", 300, "Seconds after which a task is killed."
)
CELERY_TASK_SOFT_TIME_LIMIT = env.integer(
    "CELERY_TASK_SOFT_TIME_LIMIT", 240, "Seconds after which a task is told to stop."
)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's consumer, kept alive when a broker restart finds it holding unacknowledged
# messages (petstore/brokerloss.py).
CELERY_WORKER_CONSUMER = "petstore.brokerloss:Consumer"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Two queues, so a slow DNS check never sits in front of certificate work: `checks` (the
# checks, the sweep, and any task that names none) and `certificates` (issuance and
# renewal). Each task names its queue on its decorator (domains/tasks.py); every task is
# acknowledged late and keeps no result (CELERY_TASK_ACKS_LATE, CELERY_TASK_IGNORE_RESULT).
# Production runs one worker per queue (Procfile.production); a worker started without
# -Q consumes both (CELERY_TASK_QUEUES).
CHECKS_QUEUE = "checks"
CERTIFICATES_QUEUE = "certificates"
# Webhook deliveries wait on tenants' receivers (WEBHOOKS_TIMEOUT each): a queue and a
# worker of their own, so a slow receiver never delays a check or a certificate.
WEBHOOKS_QUEUE = "webhooks"
CELERY_TASK_DEFAULT_QUEUE = CHECKS_QUEUE
CELERY_TASK_QUEUES: dict[str, dict[str, str]] = {
    CHECKS_QUEUE: {},
    CERTIFICATES_QUEUE: {},
    WEBHOOKS_QUEUE: {},
}
CELERY_BEAT_SCHEDULE: dict[str, dict[str, str | float]] = {
    # Idempotency-Key records (every /v1 resource's) live 24 hours; purge the expired ones
    # hourly. The entry and the task keep their pets names (petstore/tasks.py).
    "pets-purge-idempotency-keys": {
        "task": "pets.tasks.purge_expired_idempotency_keys",
        "schedule": 3600.0,
    },
    # Picks every domain whose check is due, including ones whose enqueue was lost.
    "domains-sweep": {"task": "domains.tasks.sweep", "schedule": DOMAINS_SWEEP_INTERVAL},
    "domains-renew-certificates": {"task": "domains.tasks.renew_certificates", "schedule": 3600.0},
    # Queues every due delivery of every channel (domains/channels/): the mails whose digest
    # window has passed, the webhook attempts, and the retries that are due.
    "domains-dispatch-deliveries": {
        "task": "domains.tasks.dispatch_deliveries",
        "schedule": 15.0,
    },
}
