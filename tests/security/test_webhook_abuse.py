"""A tenant turning the webhooks against the others (an outside red team's findings): a
name server that never answers must not hold web requests, silent receivers must not hold
every webhook worker thread, and refused creates and Redeliver are limited per project.
The DNS is the loopback server (a black-holed name never answers), the receivers are real
sockets on loopback, the counters are in the run's Redis."""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connections
from django.utils import timezone
from rest_framework.test import APIClient

from domains.channels import CHANNELS
from domains.choices import DeliveryState, EventType
from domains.models import Delivery, WebhookEndpoint
from domains.services.events import record_owner_event
from domains.services.projects import project_create
from domains.services.webhooks import delivery_redeliver, endpoint_create
from domains.webhooks import limits
from tests.domains.api.helpers import SHOP, post
from tests.fixtures.domains import LOOPBACK
from tests.fixtures.webhooks import RECEIVER_HOST
from tests.pets.helpers import assert_error, bearer

WEBHOOKS = CHANNELS["webhook"]

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("clean_webhook_limits")]
HOOKS = f"{SHOP}/webhooks"
FORM = "/dashboard/settings/notifications/webhooks/add/"
SILENT = "silent.example.test"
EVENTS = [EventType.DOMAIN_FAILING.value]


# The DNS's own lifetime in these tests: far past the create deadline, so a request that
# waited for it instead of the deadline is told apart from one that did not by a margin no
# busy machine closes (a bound on the work waited for, not a measurement of speed).
SILENT_LIFETIME = 30.0


@pytest.fixture
def silent(dns_server, settings):
    """A webhook URL whose name server never answers, for as long as the DNS would wait."""
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = SILENT_LIFETIME
    dns_server.blackhole(SILENT)
    return f"https://{SILENT}/hooks"


def waited_for_the_deadline_only(started: float) -> bool:
    return time.monotonic() - started < SILENT_LIFETIME / 2


@pytest.fixture
def bob_api(bob_key):
    client = APIClient()
    client.credentials(**bearer(bob_key.plaintext))
    return client


# --- 1. No web request waits on a target's DNS -------------------------------------


def test_an_api_create_toward_a_silent_name_server_answers_within_the_create_deadline(
    api, shop, silent, settings
):
    api.get(HOOKS)  # the first request's imports are not the DNS's
    started = time.monotonic()
    answer = post(api, HOOKS, {"url": silent, "events": EVENTS})
    assert waited_for_the_deadline_only(started)
    body = assert_error(answer, 400, "webhook_unresolvable")
    assert "did not answer in time" in body["message"]
    assert not WebhookEndpoint.objects.exists()


def test_a_dashboard_create_toward_a_silent_name_server_answers_within_the_create_deadline(
    alice_client, shop, silent, settings
):
    alice_client.get("/dashboard/settings/notifications/")
    started = time.monotonic()
    answer = alice_client.post(FORM, {"project": shop.pk, "url": silent, "events": EVENTS})
    assert waited_for_the_deadline_only(started)
    assert answer.status_code == 400
    assert "did not answer in time" in answer.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_create_waits_on_the_dns_outside_any_transaction(api, shop, silent):
    """While the request waits on the silent name server, no connection of this database
    sits idle in a transaction (rows locked, a snapshot held, a pool slot taken)."""
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        try:
            with connections["default"].cursor() as cursor:
                while not done.is_set():
                    cursor.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                        "current_database() AND state LIKE 'idle in transaction%%'"
                    )
                    seen.append(cursor.fetchone()[0])
                    time.sleep(0.05)
        finally:
            connections["default"].close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        answer = post(api, HOOKS, {"url": silent, "events": EVENTS})
    finally:
        done.set()
        watcher.join()
    assert answer.status_code == 400
    assert len(seen) > 5 and max(seen) == 0, seen


def test_refused_creates_count_against_an_hourly_limit_of_the_project(
    api, bob_api, shop, bob, dns_server, settings
):
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    settings.WEBHOOKS_FAILED_CREATES_PER_HOUR = 3
    for url in ("https://10.0.0.1/", "https://nowhere.example.test/", f"https://{SILENT}/"):
        dns_server.blackhole(SILENT)
        assert post(api, HOOKS, {"url": url, "events": EVENTS}).status_code == 400
    asked = len(dns_server.queries)
    dns_server.add("hooks.example.com", "A", "8.8.8.8")
    good = {"url": "https://hooks.example.com/", "events": EVENTS}
    body = assert_error(post(api, HOOKS, good), 429, "webhook_create_limit")
    assert set(body) == {"code", "message", "status"}
    assert "3 webhook URLs" in body["message"]
    assert len(dns_server.queries) == asked  # refused before any DNS
    # Another tenant is not held back by this one's refusals.
    project_create(slug="bobs-hooks", owner=bob, plan="pro")
    assert post(bob_api, "/v1/projects/bobs-hooks/webhooks", good).status_code == 201


def test_the_dashboard_says_the_limit_on_the_form(alice_client, shop, dns_server, settings):
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    settings.WEBHOOKS_FAILED_CREATES_PER_HOUR = 1
    form = {"project": shop.pk, "url": "https://10.0.0.1/", "events": EVENTS}
    assert alice_client.post(FORM, form).status_code == 400
    answer = alice_client.post(FORM, form)
    assert answer.status_code == 429
    assert "1 webhook URLs" in answer.content.decode()


# --- 2. Silent receivers do not hold the workers -----------------------------------


@pytest.fixture
def public_hook(shop, www, dns_server, settings):
    """shop's endpoint at a public-looking name, and a due delivery to it."""
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    dns_server.add("hooks.example.com", "A", "8.8.8.8")
    made = endpoint_create(project=shop, url="https://hooks.example.com/", events=EVENTS)
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    return made.endpoint


def test_an_attempt_whose_name_server_goes_silent_ends_within_webhooks_timeout(
    public_hook, dns_server, settings
):
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = SILENT_LIFETIME
    settings.WEBHOOKS_TIMEOUT = 1.0
    dns_server.remove("hooks.example.com")
    dns_server.blackhole("hooks.example.com")
    [delivery_id] = WEBHOOKS.due(now=timezone.now() + timedelta(seconds=2))
    started = time.monotonic()
    logged = WEBHOOKS.deliver(delivery_id=delivery_id, now=timezone.now() + timedelta(seconds=2))
    assert waited_for_the_deadline_only(started)  # WEBHOOKS_TIMEOUT, not the DNS's lifetime
    assert logged is not None and logged.state == DeliveryState.PENDING
    assert (
        logged.attempts == 1
        and "did not answer in time" in logged.attempt_log.latest("attempted_at", "pk").response
    )


@pytest.fixture
def silent_receiver(dns_server, settings):
    """A TCP listener on loopback that accepts and never answers, as RECEIVER_HOST."""
    listener = socket.create_server(("127.0.0.1", 0))
    dns_server.add(RECEIVER_HOST, "A", "127.0.0.1")
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    settings.OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
    yield f"https://{RECEIVER_HOST}:{listener.getsockname()[1]}/hooks"
    listener.close()


def _due_delivery(project, url: str, domain) -> int:
    endpoint_create(project=project, url=url, events=EVENTS)
    record_owner_event(project=project, domain=domain, type=EventType.DOMAIN_FAILING)
    [delivery_id] = WEBHOOKS.due(now=timezone.now() + timedelta(seconds=1))
    return delivery_id


def test_an_attempt_over_the_projects_cap_is_rescheduled_shortly_not_failed(
    shop, www, silent_receiver, settings
):
    settings.WEBHOOKS_IN_FLIGHT_PER_PROJECT = 1
    settings.WEBHOOKS_TIMEOUT = SILENT_LIFETIME
    delivery_id = _due_delivery(shop, silent_receiver, www)
    now = timezone.now() + timedelta(seconds=1)
    with limits.in_flight(host="elsewhere.example.test", project_id=shop.pk) as held:
        assert held
        started = time.monotonic()
        assert WEBHOOKS.deliver(delivery_id=delivery_id, now=now) is None
        assert waited_for_the_deadline_only(started)  # no wait on the silent receiver
    logged = Delivery.objects.get(pk=delivery_id)
    assert (logged.state, logged.attempts) == (DeliveryState.PENDING, 0)
    assert now < logged.next_attempt_at <= now + limits.BUSY_RETRY


def test_an_attempt_over_the_hosts_cap_is_rescheduled_and_other_hosts_go_on(
    shop, www, silent_receiver, settings
):
    settings.WEBHOOKS_IN_FLIGHT_PER_HOST = 1
    settings.WEBHOOKS_TIMEOUT = 0.5
    delivery_id = _due_delivery(shop, silent_receiver, www)
    now = timezone.now() + timedelta(seconds=1)
    with limits.in_flight(host=RECEIVER_HOST, project_id=0):
        assert WEBHOOKS.deliver(delivery_id=delivery_id, now=now) is None
    assert Delivery.objects.get(pk=delivery_id).attempts == 0
    # Its slot is free again, and is freed after the attempt (a timeout) too.
    logged = WEBHOOKS.deliver(delivery_id=delivery_id, now=now + limits.BUSY_RETRY)
    assert logged is not None and logged.attempts == 1
    assert "No answer within" in logged.attempt_log.latest("attempted_at", "pk").response
    assert limits.in_flight_now(host=RECEIVER_HOST, project_id=shop.pk) == (0, 0)


def test_the_cap_holds_across_concurrent_attempts(shop, www, silent_receiver, settings):
    settings.WEBHOOKS_IN_FLIGHT_PER_PROJECT = 2
    entered = [limits.in_flight(host=f"h{i}.example.test", project_id=shop.pk) for i in range(3)]
    held = [slot.__enter__() for slot in entered]
    try:
        assert held == [True, True, False]
        assert limits.in_flight_now(host="h0.example.test", project_id=shop.pk) == (1, 2)
    finally:
        for slot in entered:
            slot.__exit__(None, None, None)
    assert limits.in_flight_now(host="h0.example.test", project_id=shop.pk) == (0, 0)


def test_redeliver_is_limited_per_project_per_minute(shop, www, webhook_receiver, settings):
    settings.WEBHOOKS_REDELIVER_PER_MINUTE = 2
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=EVENTS)
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    logged = Delivery.objects.get(channel="webhook", target_id=made.endpoint.pk)
    delivery_redeliver(delivery=logged)
    delivery_redeliver(delivery=logged)
    with pytest.raises(ValidationError) as refused:
        delivery_redeliver(delivery=logged)
    assert refused.value.error_list[0].code == "webhook_redeliver_limit"


def test_the_webhooks_windows_are_redis_clock_like_the_apis(shop, settings, time_machine):
    """One limiter for the API and the webhooks (petstore/ratelimits.py): a window ends by
    Redis's clock, so a process whose clock is off, or moved, counts in the same window."""
    settings.WEBHOOKS_REDELIVER_PER_MINUTE = 1
    time_machine.move_to(timezone.now(), tick=True)
    assert limits.redeliver_allowed(shop.pk)[0]
    time_machine.shift(timedelta(minutes=5))
    allowed, left = limits.redeliver_allowed(shop.pk)
    assert not allowed and 0 < left <= 60


def test_the_dashboard_says_the_redeliver_limit(
    alice_client, shop, www, webhook_receiver, settings
):
    settings.WEBHOOKS_REDELIVER_PER_MINUTE = 1
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=EVENTS)
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    logged = Delivery.objects.get(channel="webhook")
    url = f"{FORM[:-4]}{made.endpoint.pk}/deliveries/{logged.pk}/redeliver/"
    assert "Redelivery queued" in alice_client.post(url, follow=True).content.decode()
    page = alice_client.post(url, follow=True).content.decode()
    assert "Redeliver 1 times a minute" in page
