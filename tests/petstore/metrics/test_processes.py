"""Counters add up across processes: what a real Celery worker counts shows in the web
process's scrape (Redis store), and two web processes share one folder of counts (the
multiprocess store)."""

from __future__ import annotations

import requests
from django.test import Client

from domains import tasks
from domains.choices import State
from domains.models import Domain
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET
from tests.petstore.metrics.scrape import FAMILIES, TOKEN, Scrape
from tests.processes import service_env, wait_for, web_server


def scrape_here(client: Client) -> Scrape:
    response = client.get("/metrics", HTTP_HOST="10.0.0.7", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    return Scrape(response.content.decode())


def test_what_a_worker_counts_shows_in_the_web_processs_scrape(
    start_worker, dns_server, shop, alice, settings, monkeypatch, client
):
    settings.METRICS_TOKEN = TOKEN
    monkeypatch.setenv("METRICS_FLUSH_INTERVAL", "0.2")
    before = scrape_here(client)
    start_worker()
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.servfail("flaky.example.test")
    www = domain_add(project=shop, hostname="www.example.test", actor=alice)
    flaky = domain_add(project=shop, hostname="flaky.example.test", actor=alice)

    tasks.request_check(domain=www, actor=alice)  # checked, then issued: active
    tasks.check_domains.delay([flaky.pk])  # a temporary failure: retried
    tasks.check_domain.apply_async(("not-an-id",))  # raises in the worker: a task failure
    wait_for(
        lambda: Domain.objects.get(pk=www.pk).state == State.ACTIVE,
        timeout=60,
        what="the domain to become active",
    )

    def counted() -> Scrape | None:
        after = scrape_here(client)
        grown = {
            name: after.value(name, **labels) - before.value(name, **labels)
            for name, labels in [
                ("petstore_domain_checks_total", {"code": "ok"}),
                ("petstore_domain_checks_total", {"code": "dns_servfail"}),
                ("petstore_verify_to_active_seconds_count", {}),
                ("petstore_task_retries_total", {"task": "domains.tasks.check_domains"}),
                ("petstore_task_failures_total", {"task": "domains.tasks.check_domain"}),
            ]
        }
        return after if all(value >= 1 for value in grown.values()) else None

    after = wait_for(counted, timeout=30, what="the worker's counts in the scrape")
    assert set(after.families) >= FAMILIES
    # Only the worker ran the tasks: this process counted none of it.
    assert (
        after.value("petstore_verify_to_active_seconds_count")
        - before.value("petstore_verify_to_active_seconds_count")
        == 1
    )


def _count(base: str, times: int) -> None:
    for _ in range(times):
        assert requests.get(base + "/healthz", timeout=10).status_code == 200


def test_two_web_processes_on_the_multiprocess_store_add_up_in_one_folder(
    settings, tmp_path, transactional_db
):
    """METRICS_STORE=multiprocess: prometheus-client's files under METRICS_DIR, one host.
    (The queue depth, read from the broker whatever the store, is test_endpoint's.)"""
    env = service_env(
        settings,
        PETSTORE_VAR_DIR=str(tmp_path / "var"),
        METRICS_TOKEN=TOKEN,
        METRICS_STORE="multiprocess",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "not-this-one"),
    )
    with web_server(env, tmp_path) as first, web_server(env, tmp_path) as second:
        scrape = Scrape(
            requests.get(
                first + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
            ).text
        )
        before = scrape.value("petstore_http_requests_total", route="healthz", status="200")
        _count(first, 3)
        _count(second, 4)
        response = requests.get(
            second + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
        )
    after = Scrape(response.text)
    assert set(after.families) >= FAMILIES
    assert after.value("petstore_http_requests_total", route="healthz", status="200") == before + 7
    assert any((tmp_path / "var" / "metrics").glob("counter_*.db"))
    assert not (tmp_path / "not-this-one").exists()
