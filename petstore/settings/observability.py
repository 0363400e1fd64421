"""What the operators see: metrics, error reports and logs."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section
from petstore.settings.core import DEBUG, VAR_DIR

env = Section("Observability")
METRICS_TOKEN = env.text(
    "METRICS_TOKEN",
    "",
    "`GET /metrics` (Prometheus, on any Host) answers only `Authorization: Bearer "
    "<METRICS_TOKEN>`; empty: the endpoint is off.",
    example="",
    secret=True,
)
METRICS_STORE = env.text(
    "METRICS_STORE",
    "redis",
    "Where every process's counters add up: `redis` (`REDIS_URL`; any number of hosts) or "
    "`multiprocess` (files in `METRICS_DIR`; one host).",
)
if METRICS_STORE not in {"redis", "multiprocess"}:
    raise ImproperlyConfigured(
        f"METRICS_STORE must be redis or multiprocess, not {METRICS_STORE!r}"
    )
METRICS_FLUSH_INTERVAL = env.number(
    "METRICS_FLUSH_INTERVAL",
    5.0,
    "Seconds between two pushes of a process's counts to Redis (what a killed process loses).",
)
METRICS_DIR = Path(
    env.text(
        "METRICS_DIR",
        str(VAR_DIR / "metrics"),
        "The `multiprocess` store's files.",
        shown="`var/metrics`",
    )
)
# prometheus-client picks its multiprocess mode from this variable when it is first
# imported, which is after the settings: the store named above decides, nothing inherited.
if METRICS_STORE == "multiprocess":
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(METRICS_DIR)
else:
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
SENTRY_DSN = env.text(
    "SENTRY_DSN",
    "",
    "Errors go to this Sentry DSN with their request id; empty: the SDK is not started.",
    example="",
    secret=True,
)
SENTRY_ENVIRONMENT = env.text(
    "SENTRY_ENVIRONMENT",
    "development" if DEBUG else "production",
    "The environment name on each error report.",
    shown="`production` (DEBUG: `development`)",
)

# The web process and the Celery worker (petstore/celery.py) both log through this; every
# line carries the request id of the request it serves, or of the request that queued its
# task. The edge writes the access lines in the same format (domains/edge/caddy.py).
LOG_FORMAT = env.text(
    "LOG_FORMAT",
    "plain",
    "`json`: one JSON object a line with the request id (production); `plain`: text.",
    example="json",
)
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "petstore.http.requestid.RequestIDFilter"},
        "routine_tasks": {"()": "petstore.routinelogs.RoutineTaskLines"},
    },
    "formatters": {
        "plain": {
            "class": "petstore.http.logjson.PlainFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
        "json": {"()": "petstore.http.logjson.JSONFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {
        "handlers": ["console"],
        "level": env.text("LOG_LEVEL", "INFO", "The lowest level logged."),
    },
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Beat's routine tasks at DEBUG on the worker (petstore/routinelogs.py).
        "celery.worker.strategy": {"filters": ["routine_tasks"]},  # "received"
        "celery.app.trace": {"filters": ["routine_tasks"]},  # "succeeded"
    },
}
