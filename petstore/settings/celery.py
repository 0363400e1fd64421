"""Celery (petstore/celery.py reads the CELERY_ names): the broker, the queues and the beat."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section
from petstore.settings.core import VAR_DIR
from petstore.settings.data import (
    EMBEDDED_REDIS_SOCKET,
    REDIS_SENTINELS,
    REDIS_TIMEOUT,
    REDIS_URL,
    REDIS_URL_GIVEN,
    SENTINEL_KWARGS,
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
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {
    "visibility_timeout": 3600,
    "socket_connect_timeout": REDIS_TIMEOUT,
    "socket_timeout": REDIS_TIMEOUT,
}
if REDIS_SENTINELS:
    # Kombu's sentinel transport: one `sentinel://` URL per sentinel, each with the URL's
    # password and database, and the primary's name as a transport option. As the read and
    # write URLs: Celery prefers the environment's CELERY_BROKER_URL to its setting.
    _broker = urlsplit(CELERY_BROKER_URL)
    if _broker.scheme not in ("redis", "rediss") or not _broker.hostname:
        raise ImproperlyConfigured(
            "REDIS_SENTINELS needs CELERY_BROKER_URL as redis://[:password@]<primary's name>/<db>"
        )
    _auth = _broker.netloc.rpartition("@")[0]
    CELERY_BROKER_READ_URL = CELERY_BROKER_WRITE_URL = ";".join(
        f"sentinel://{_auth}{'@' if _auth else ''}{host}:{port}{_broker.path}"
        for host, port in REDIS_SENTINELS
    )
    CELERY_BROKER_TRANSPORT_OPTIONS |= {
        "master_name": _broker.hostname,
        "sentinel_kwargs": SENTINEL_KWARGS,
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
# Beat: RedBeat's scheduler (petstore/beat.py), its schedule and its lock in REDIS_URL's
# Redis. Any number of beats may run; the one holding the lock sends, the others wait for it
# (docs/operators/beat.md). A beat renews the lock each tick, and ticks at least six times per
# BEAT_LOCK_TIMEOUT; a waiting beat tries for it as often.
BEAT_LOCK_TIMEOUT = env.integer(
    "BEAT_LOCK_TIMEOUT",
    30,
    "Seconds the active beat's lock lasts unless renewed: a waiting beat takes over this long "
    "after the active one dies.",
)
if BEAT_LOCK_TIMEOUT < 6:
    raise ImproperlyConfigured(
        f"BEAT_LOCK_TIMEOUT must be 6 seconds or more, not {BEAT_LOCK_TIMEOUT}"
    )
CELERY_BEAT_SCHEDULER = "petstore.beat:Scheduler"
CELERY_BEAT_MAX_LOOP_INTERVAL = BEAT_LOCK_TIMEOUT / 6
# RedBeat's own names, outside the CELERY_ namespace: it looks for them so, and would take the
# broker's URL and options in their place.
REDBEAT_REDIS_URL = REDIS_URL
REDBEAT_REDIS_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": REDIS_TIMEOUT,
    "socket_timeout": REDIS_TIMEOUT,
}
if REDIS_SENTINELS:
    # RedBeat's own form: a `redis-sentinel://` URL, the rest in its options.
    _cache = urlsplit(REDIS_URL)
    REDBEAT_REDIS_URL = "redis-sentinel://"
    REDBEAT_REDIS_OPTIONS = {
        "sentinels": REDIS_SENTINELS,
        "service_name": _cache.hostname,
        "db": int(_cache.path.strip("/") or 0),
        "password": unquote(_cache.password) if _cache.password else None,
        "socket_timeout": REDIS_TIMEOUT,
        "sentinel_kwargs": SENTINEL_KWARGS,
    }
REDBEAT_KEY_PREFIX = "petstore:beat:"
REDBEAT_LOCK_TIMEOUT = BEAT_LOCK_TIMEOUT
# Touched by the active beat at each tick: compose's health check of beat reads its age.
BEAT_TICKED_FILE = VAR_DIR / "beat-ticked"
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
    # The platform's own wildcard certificate, over DNS-01, when it is due (and DNS-01 is on).
    "domains-renew-platform-certificate": {
        "task": "domains.tasks.renew_platform_certificate",
        "schedule": 3600.0,
    },
    # Queues every due delivery of every channel (domains/channels/): the mails whose digest
    # window has passed, the webhook attempts, and the retries that are due.
    "domains-dispatch-deliveries": {
        "task": "domains.tasks.dispatch_deliveries",
        "schedule": 15.0,
    },
    # Deletes the audit entries past AUDIT_LOG_RETENTION_DAYS (the one deletion allowed).
    "domains-purge-audit-log": {"task": "domains.tasks.purge_audit_log", "schedule": 86400.0},
    # The key.expiring event of each API key that ends within a week (told once per key).
    "domains-tell-expiring-keys": {
        "task": "domains.tasks.tell_expiring_keys",
        "schedule": 3600.0,
    },
}
