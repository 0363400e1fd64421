"""GET /metrics: off without METRICS_TOKEN, answered only with it (on any Host a scraper
uses), every family there after real activity, the gauges equal to the database."""

from __future__ import annotations

import time
import tomllib
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from domains import metrics, pki, tasks
from domains.choices import State
from domains.edge import endpoint as edge_endpoint
from domains.models import Certificate, Domain
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from petstore.celery import app as celery_app
from petstore.taskfailures import task_failure_record
from tests.fixtures.domains import TARGET, go_live, in_step
from tests.fixtures.platformcertificate import store_platform_certificate
from tests.petstore.metrics.scrape import FAMILIES, TOKEN, Scrape
from tests.processes import ROOT

SCRAPER_HOST = "10.1.2.3:8000"  # Prometheus asks each process by its address


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.ALLOWED_HOSTS = ["localhost"]
    return TOKEN


def scrape(client: Client, host: str = SCRAPER_HOST) -> Scrape:
    response = client.get("/metrics", HTTP_HOST=host, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return Scrape(response.content.decode())


@pytest.mark.django_db
def test_the_endpoint_is_off_without_a_token(client, settings):
    settings.METRICS_TOKEN = ""
    settings.ALLOWED_HOSTS = ["localhost"]
    response = client.get("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer ")
    assert response.status_code == 404
    assert b"petstore_" not in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Bearer {TOKEN}x", TOKEN])
def test_without_the_right_token_it_answers_as_if_there_were_no_endpoint(
    client, token, authorization
):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    on_dashboard = client.get("/metrics", HTTP_HOST="localhost", **headers)
    assert on_dashboard.status_code == 404
    assert b"petstore_" not in on_dashboard.content
    # By address, the same as any other path there: Host refused, nothing about metrics.
    by_address = client.get("/metrics", HTTP_HOST=SCRAPER_HOST, **headers)
    assert by_address.status_code == client.get("/nothing", HTTP_HOST=SCRAPER_HOST).status_code
    assert b"petstore_" not in by_address.content


@pytest.mark.django_db
def test_the_token_is_answered_on_the_scrapers_address_and_on_the_dashboard(client, token):
    assert "petstore_domains" in scrape(client).families
    assert "petstore_domains" in scrape(client, host="localhost").families
    refused = client.post("/metrics", HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert refused.status_code == 404


# Transactional: the edge's endpoint closes a connection left outside autocommit.
@pytest.mark.django_db(transaction=True)
def test_every_family_is_there_after_real_activity(client, token, dns_server, shop, alice):
    before = scrape(client)
    # A check recorded and a domain active through the local CA.
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    www = domain_add(project=shop, hostname="www.example.test", actor=alice)
    tasks.enqueue(domain_check(domain_id=www.pk).next_steps)
    certificates.certificate_issue(domain_id=www.pk)
    assert Domain.objects.get(pk=www.pk).state == State.ACTIVE
    # A task failure, an HTTP request, an edge lookup (refused: no secret).
    task_failure_record(task_name="domains.tasks.check_domain", kind="failed", error="boom")
    assert client.get("/healthz", HTTP_HOST=SCRAPER_HOST).status_code == 200
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/certificate/x", "REMOTE_ADDR": "127.0.0.1"}
    edge_endpoint.application(environ, lambda status, headers: None)

    after = scrape(client)
    assert set(after.families) >= FAMILIES

    def grew(sample: str, **labels: str) -> float:
        return after.value(sample, **labels) - before.value(sample, **labels)

    assert grew("petstore_domain_checks_total", code="ok") == 1
    assert grew("petstore_verify_to_active_seconds_count") == 1
    assert grew("petstore_task_failures_total", task="domains.tasks.check_domain") == 1
    assert grew("petstore_http_requests_total", route="healthz", status="200") == 1
    assert grew("petstore_http_request_duration_seconds_count", route="healthz") == 1
    assert grew("petstore_edge_certificate_lookups_total", result="refused") == 1
    assert grew("petstore_edge_certificate_lookup_seconds_count") == 1
    assert after.value("petstore_domains", state="active") == 1


@pytest.mark.django_db
def test_a_ca_that_cannot_be_reached_and_a_renewal_not_done_are_counted(
    client, token, settings, dns_server, shop, alice
):
    before = scrape(client)
    # An ACME directory nobody listens on: the issue waits (Pending), counted as unreachable.
    settings.DOMAINS_CA = "acme"
    settings.DOMAINS_ACME_DIRECTORIES = ["http://127.0.0.1:9/directory"]
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    issuing = domain_add(project=shop, hostname="www.example.test", actor=alice)
    Domain.objects.filter(pk=issuing.pk).update(**in_step(State.ISSUING))
    with pytest.raises(pki.Pending):
        certificates.certificate_issue(domain_id=issuing.pk)
    # An active domain whose DNS has not passed for two days is not renewed.
    stale = go_live(domain_add(project=shop, hostname="old.example.test", actor=alice))
    Domain.objects.filter(pk=stale.pk).update(checked_at=timezone.now() - timedelta(days=2))
    assert certificates.certificate_renew(domain_id=stale.pk) is None

    after = scrape(client)
    assert after.value("petstore_acme_errors_total", type="unreachable") == (
        before.value("petstore_acme_errors_total", type="unreachable") + 1
    )
    assert after.value("petstore_certificate_renewals_total", outcome="blocked") == (
        before.value("petstore_certificate_renewals_total", outcome="blocked") + 1
    )


@pytest.mark.django_db
def test_a_routed_request_is_counted_by_its_url_pattern_not_its_path(client, token, settings):
    before = scrape(client)
    for pet_id in (1, 2, 3):
        client.get(f"/v1/pets/{pet_id}", HTTP_HOST="localhost")
    after = scrape(client)
    routes = {
        sample.labels["route"]
        for sample in after.families["petstore_http_requests"].samples
        if sample.name == "petstore_http_requests_total"
    }
    assert not any("/1" in route or "/2" in route for route in routes)
    counted = sum(
        after.value("petstore_http_requests_total", route=route, status="401")
        - before.value("petstore_http_requests_total", route=route, status="401")
        for route in routes
        if route.startswith("v1/pets")
    )
    assert counted == 3
    timed = sum(
        after.value("petstore_http_request_duration_seconds_count", route=route)
        - before.value("petstore_http_request_duration_seconds_count", route=route)
        for route in routes
        if route.startswith("v1/pets")
    )
    assert timed == 3


@pytest.mark.django_db
def test_paths_no_pattern_matches_are_timed_as_one_route(client, token):
    before = scrape(client)
    for path in ("/no/such/page", "/another/missing/one", "/nothing/at/all"):
        assert client.get(path, HTTP_HOST="localhost").status_code == 404
    after = scrape(client)
    samples = after.families["petstore_http_request_duration_seconds"].samples
    assert not any("missing" in sample.labels.get("route", "") for sample in samples)
    other = "petstore_http_request_duration_seconds_count"
    assert after.value(other, route="other") == before.value(other, route="other") + 3


@pytest.mark.django_db
def test_the_series_an_alert_watches_are_there_before_the_first_count(client, token):
    seen = scrape(client)
    renewals = seen.families["petstore_certificate_renewals"].samples
    for outcome in metrics.RENEWAL_OUTCOMES:
        assert {"outcome": outcome} in [
            sample.labels for sample in renewals if sample.name.endswith("_total")
        ]
    assert {"type": "rateLimited"} in [
        sample.labels for sample in seen.families["petstore_acme_errors"].samples
    ]
    for family in ("petstore_webhook_delivery_attempts", "petstore_email_deliveries"):
        outcomes = {sample.labels["outcome"] for sample in seen.families[family].samples}
        assert outcomes == set(metrics.DELIVERY_OUTCOMES) == {"delivered", "failed"}


@pytest.mark.django_db
def test_the_build_info_names_the_release_in_pyproject(client, token):
    """1, labelled with the version pyproject.toml declares (the release CHANGELOG.md
    names), in every web process's answer."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    [sample] = scrape(client).families["petstore_build_info"].samples
    assert sample.labels == {"version": declared}
    assert sample.value == 1
    assert f"## [{declared}]" in (ROOT / "CHANGELOG.md").read_text()


# Transactional: the count of a renewal waits for its commit.
@pytest.mark.django_db(transaction=True)
def test_a_renewal_done_is_counted_as_renewed(client, token, dns_server, shop, alice):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    # Active without a certificate: due for renewal at once.
    www = go_live(domain_add(project=shop, hostname="www.example.test", actor=alice))
    before = scrape(client)

    assert certificates.certificate_renew(domain_id=www.pk) is not None

    after = scrape(client)
    renewals = "petstore_certificate_renewals_total"
    assert after.value(renewals, outcome="renewed") == before.value(renewals, outcome="renewed") + 1
    assert after.value(renewals, outcome="refused") == before.value(renewals, outcome="refused")


@pytest.mark.django_db
def test_the_sweeps_last_success_is_the_same_for_every_process_and_0_before_any(client, token):
    cache.delete(metrics.SWEEP_LAST_SUCCESS_KEY)
    assert scrape(client).value("petstore_sweep_last_success_timestamp_seconds") == 0

    started = time.time()
    tasks.sweep()  # the beat's task, run here
    finished = time.time()

    seen = scrape(client).value("petstore_sweep_last_success_timestamp_seconds")
    assert started <= seen <= finished
    # Kept in Redis, not in this process: another process reads the same time.
    assert cache.get(metrics.SWEEP_LAST_SUCCESS_KEY) == seen


@pytest.mark.django_db
def test_the_gauges_are_the_databases_counts(client, token, shop, alice):
    now = timezone.now()
    names = iter(f"d{n}.example.test" for n in range(10))
    for state, count in [(State.PENDING, 3), (State.ISSUING, 1), (State.FAILED, 2)]:
        for _ in range(count):
            domain = domain_add(project=shop, hostname=next(names), actor=alice)
            Domain.objects.filter(pk=domain.pk).update(**in_step(state))
    # Two active: one certificate expires in 5 days, one in 10; a third far away.
    for days in (5, 10, 60):
        domain = go_live(domain_add(project=shop, hostname=next(names), actor=alice))
        Certificate.objects.create(
            domain=domain, serial=f"{days:x}", not_before=now - timedelta(days=1),
            not_after=now + timedelta(days=days), san=domain.hostname, pem="-", key_pem="-",
            issuer="test",
        )  # fmt: skip

    seen = scrape(client)
    for state in State:
        expected = Domain.objects.filter(state=state).count()
        assert seen.value("petstore_domains", state=state.value) == expected, state
    assert seen.value("petstore_domains", state="pending") == 3
    assert seen.value("petstore_domains", state="active") == 3
    assert seen.value("petstore_certificates_expiring", within_days="7") == 1
    assert seen.value("petstore_certificates_expiring", within_days="14") == 2
    assert seen.value("petstore_certificates_expiring", within_days="21") == 2


@pytest.mark.django_db
def test_the_platforms_own_certificate_counts_among_the_expiring_unless_the_operators(
    client, token, settings
):
    store_platform_certificate(days=10)
    seen = scrape(client)
    assert seen.value("petstore_certificates_expiring", within_days="7") == 0
    assert seen.value("petstore_certificates_expiring", within_days="14") == 1
    assert seen.value("petstore_certificates_expiring", within_days="21") == 1
    # The operator's own files: nothing renews the row, the edge's probe watches theirs.
    settings.EDGE_PLATFORM_CERTIFICATE = "/etc/petstore/platform.pem"
    assert scrape(client).value("petstore_certificates_expiring", within_days="21") == 0


@pytest.mark.django_db
def test_the_queue_depth_is_the_brokers_own_count(client, token):
    # The broker's own client (a TCP or a unix-socket URL alike, in kombu's spelling).
    channel = celery_app.connection_for_read().default_channel
    broker = channel.client  # type: ignore[attr-defined]  # kombu's Redis channel
    before = scrape(client).value("petstore_queue_depth", queue="checks")
    assert before == broker.llen("checks")
    # Nothing consumes here: the message waits (a worker started later drops it: --purge).
    tasks.check_domain.apply_async((0,), countdown=3600)
    after = scrape(client)
    assert after.value("petstore_queue_depth", queue="checks") == before + 1
    assert after.value("petstore_queue_depth", queue="checks") == broker.llen("checks")
    assert after.value("petstore_queue_depth", queue="webhooks") == broker.llen("webhooks")
