"""Liveness and readiness probes for load balancers and orchestrators.

A load balancer probes a target by its IP address (`Host: 10.1.2.3:8000`) over plain
HTTP, which neither the host routing nor ALLOWED_HOSTS accept. ProbeMiddleware sits
before both and answers exactly the two probe paths on any Host; every other path on
such a Host is still refused.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
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
            # One attempt on a new connection: its timeouts (REDIS_TIMEOUT) bound it.
            conn.ensure_connection(max_retries=0)
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


PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {"/healthz": healthz, "/readyz": readyz}


class ProbeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info)
        if probe is not None:
            return probe(request)
        return self.get_response(request)
