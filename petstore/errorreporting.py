"""Error reports to Sentry (or any server that speaks its protocol), when SENTRY_DSN is set.

Without SENTRY_DSN the SDK is never initialised: nothing is patched and nothing is sent.
With it, the Django integration reports a view's unhandled error, the Celery integration
a task's, the logging integration every ERROR log line; each event carries the request
id (tag `request_id`) of the request it happened in, or of the request that queued the
task (petstore/celery.py restores it), so a report leads to its log lines and back.
No personal data is sent (no cookies, no user, no client address) and no traces.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from petstore.http.requestid import request_id_var

REQUEST_ID_TAG = "request_id"


def tag_request_id(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    """Runs in the thread that raised, inside its request or task: the id is still set."""
    request_id = request_id_var.get()
    if request_id != "-":  # outside any request or task there is none to give
        event.setdefault("tags", {})[REQUEST_ID_TAG] = request_id
    return event


def start() -> None:
    """Once per process, from the app's ready() (web, worker, beat, edge, commands)."""
    if not settings.SENTRY_DSN:
        return
    # Imported only here, not for a cycle: the SDK and its integrations take about half a
    # second to import, which every process without SENTRY_DSN (make run, the tests, the
    # web workers' start-up) is spared.
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=settings.SENTRY_DSN,
        environment=settings.SENTRY_ENVIRONMENT,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        send_default_pii=False,
        traces_sample_rate=None,
        before_send=tag_request_id,  # type: ignore[arg-type]
    )
