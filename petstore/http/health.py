"""Liveness and readiness probes for load balancers and orchestrators."""

from __future__ import annotations

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from petstore.celery import app as celery_app


@require_GET
def healthz(request):
    """The process is up and answering."""
    return JsonResponse({"status": "ok"})


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        return f"error: {type(exc).__name__}"
    return "ok"


def _broker() -> str:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001
        return f"error: {type(exc).__name__}"
    return "ok"


@require_GET
def readyz(request):
    """The database and the Celery broker are reachable: 200, otherwise 503."""
    checks = {"database": _database(), "broker": _broker()}
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )
