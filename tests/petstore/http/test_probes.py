"""The probes: /healthz answers while the process is up, /readyz checks the database and broker."""

import pytest

from petstore.celery import app


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
