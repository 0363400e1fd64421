"""Probes, request ids and the production start-up rules."""

import json
import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from petstore.http.logjson import JSONFormatter
from petstore.http.requestid import RequestIDFilter

ROOT = Path(__file__).resolve().parent.parent


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.django_db
def test_healthz_answers_while_the_process_is_up(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_database_and_broker(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}


@pytest.mark.django_db
def test_readyz_is_503_when_the_broker_is_unreachable(client, monkeypatch):
    from petstore.celery import app

    unreachable = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    # Celery lets the CELERY_BROKER_URL variable override its configuration.
    monkeypatch.setenv("CELERY_BROKER_URL", unreachable)
    monkeypatch.setattr(app.conf, "broker_url", unreachable)
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("error")


@pytest.mark.django_db
def test_every_response_carries_a_request_id(client):
    first = client.get("/healthz")
    second = client.get("/healthz")
    assert len(first["X-Request-ID"]) == 32
    assert first["X-Request-ID"] != second["X-Request-ID"]


@pytest.mark.django_db
def test_a_sane_incoming_request_id_is_kept_and_a_hostile_one_replaced(client):
    kept = client.get("/healthz", HTTP_X_REQUEST_ID="lb-1234.abc")
    replaced = client.get("/healthz", HTTP_X_REQUEST_ID="x\r\nSet-Cookie: a=b" + "y" * 80)
    assert kept["X-Request-ID"] == "lb-1234.abc"
    assert replaced["X-Request-ID"] != "lb-1234.abc"
    assert "\n" not in replaced["X-Request-ID"] and len(replaced["X-Request-ID"]) == 32


def test_json_log_lines_carry_the_request_id_and_extras():
    from petstore.http.requestid import request_id_var

    record = logging.LogRecord("petstore", logging.INFO, __file__, 1, "hello %s", ("you",), None)
    record.code = "not_found"
    token = request_id_var.set("req-42")
    try:
        RequestIDFilter().filter(record)
    finally:
        request_id_var.reset(token)
    line = json.loads(JSONFormatter().format(record))
    assert line["message"] == "hello you"
    assert line["request_id"] == "req-42"
    assert line["code"] == "not_found"
    assert line["level"] == "INFO"


def test_production_refuses_to_start_without_a_secret_key():
    result = _manage("check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_deploy_check_is_clean_with_production_settings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="api.example.com",
        SECURE_SSL_REDIRECT="1",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.django_db
def test_static_files_are_served_without_debug(client, settings):
    """The offline Swagger UI and the admin need their files in production too (WhiteNoise)."""
    assert settings.DEBUG is False
    docs = client.get("/v1/docs/")
    assert docs.status_code == 200
    bundle = "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"
    assert bundle in docs.content.decode()
    response = client.get(bundle)
    assert response.status_code == 200
    assert b"SwaggerUI" in b"".join(response.streaming_content)
