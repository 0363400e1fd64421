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


@pytest.mark.django_db
def test_probes_answer_a_load_balancer_that_names_the_target_by_ip(client, settings):
    """A load balancer sends its target's address as the Host, over plain HTTP, to a
    production process whose ALLOWED_HOSTS names only the public host."""
    settings.ALLOWED_HOSTS = ["api.petstore.example"]
    settings.SECURE_SSL_REDIRECT = True
    ready = client.get("/readyz", headers={"host": "10.1.2.3:8000"})
    assert ready.status_code == 200
    assert ready.json()["status"] == "ok"
    alive = client.get("/healthz", headers={"host": "10.1.2.3:8000"})
    assert alive.status_code == 200


@pytest.mark.django_db
def test_probes_on_the_apps_own_host_are_not_sent_to_https(client, settings):
    settings.DASHBOARD_HOST = "api.petstore.example"
    settings.ALLOWED_HOSTS = [settings.DASHBOARD_HOST]
    settings.SECURE_SSL_REDIRECT = True
    host = {"host": settings.DASHBOARD_HOST}
    for path in ("/healthz", "/readyz"):
        assert client.get(path, headers=host).status_code == 200, path
    assert client.get("/v1/pets", headers=host).status_code == 301  # everything else is


@pytest.mark.django_db
def test_an_ip_host_still_gets_nothing_but_the_probes(client, settings):
    settings.ALLOWED_HOSTS = ["api.petstore.example"]
    for path in ("/v1/pets", "/readyz/", "/healthz/x", "/admin/", "/dashboard/"):
        response = client.get(path, headers={"host": "10.1.2.3:8000"})
        assert response.status_code == 404, path
        assert response.content.startswith(b"No project is published at 10.1.2.3"), path
