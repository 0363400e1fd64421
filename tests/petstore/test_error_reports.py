"""Errors go to Sentry when SENTRY_DSN is set, with the request id: a view's error from a
real web server and a task's from a real worker reach a Sentry endpoint on loopback (the
DSN names it). Without SENTRY_DSN the SDK is not even started."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from domains import tasks
from petstore.http.requestid import request_id_var
from tests.processes import Worker, service_env, wait_for, web_server


class SentryReceiver:
    """What a Sentry server does with an envelope, as far as the test needs: keep its events."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                receiver.envelope(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def dsn(self) -> str:
        return f"http://publickey@127.0.0.1:{self.server.server_address[1]}/1"

    def envelope(self, body: bytes) -> None:
        lines = body.split(b"\n")
        # Header line, then (item header, payload) pairs.
        for header, payload in zip(lines[1::2], lines[2::2], strict=False):
            if json.loads(header).get("type") == "event":
                self.events.append(json.loads(payload))

    def event_tagged(self, request_id: str) -> dict | None:
        for event in self.events:
            if event.get("tags", {}).get("request_id") == request_id:
                return event
        return None


@pytest.fixture
def sentry() -> Iterator[SentryReceiver]:
    receiver = SentryReceiver()
    yield receiver
    receiver.server.shutdown()


def exception_types(event: dict) -> list[str]:
    return [value["type"] for value in event.get("exception", {}).get("values", [])]


def test_a_view_error_is_reported_with_its_request_id(sentry, settings, tmp_path, transactional_db):
    env = service_env(
        settings, SENTRY_DSN=sentry.dsn, DJANGO_SETTINGS_MODULE="tests.petstore.boom_settings"
    )
    with web_server(env, tmp_path) as base:
        response = requests.get(base + "/boom/", headers={"X-Request-ID": "view-error-1"})
        assert response.status_code == 500
        event = wait_for(lambda: sentry.event_tagged("view-error-1"), what="the view's event")
    assert "Boom" in exception_types(event)
    assert event["request"]["url"].endswith("/boom/")
    assert "cookies" not in event["request"]


def test_a_task_error_is_reported_with_the_request_id_that_queued_it(
    sentry, settings, tmp_path, transactional_db, dns_server
):
    worker = Worker(service_env(settings, SENTRY_DSN=sentry.dsn), tmp_path, "sentry", purge=True)
    try:
        worker.wait_ready()
        token = request_id_var.set("task-error-1")
        try:
            tasks.check_domain.apply_async(("not-an-id",))  # raises in the worker
        finally:
            request_id_var.reset(token)
        event = wait_for(lambda: sentry.event_tagged("task-error-1"), what="the task's event")
    finally:
        worker.stop()
    assert "ValueError" in exception_types(event)
    assert event["extra"]["celery-job"]["task_name"] == "domains.tasks.check_domain"


SDK_STARTED = (
    "import django, sentry_sdk; django.setup(); print(sentry_sdk.get_client().is_active())"
)


def test_without_a_dsn_the_sdk_is_not_started(sentry, settings, transactional_db):
    def started(**extra: str) -> str:
        env = service_env(settings, **extra)
        if "SENTRY_DSN" not in extra:  # nor inherited from whoever runs the tests
            env.pop("SENTRY_DSN", None)
        return subprocess.run(
            [sys.executable, "-c", SDK_STARTED], env=env, check=True, text=True,
            capture_output=True, timeout=60,
        ).stdout.strip()  # fmt: skip

    assert started() == "False"
    assert started(SENTRY_DSN=sentry.dsn) == "True"
    assert sentry.events == []  # starting sends nothing
