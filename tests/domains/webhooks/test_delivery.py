"""Webhook deliveries through the real path: an owner event recorded by a check, the
dispatcher and the delivery task as beat and the worker run them, a real HTTPS receiver
on loopback (tests/fixtures/webhooks.py), the Standard Webhooks verifier."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import DeliveryState, EventType, Role
from domains.models import Delivery
from domains.policy import WEBHOOK_RETRY_BACKOFF
from domains.services.events import record_owner_event
from domains.services.members import member_add
from domains.services.webhooks import delivery_redeliver, endpoint_create
from petstore.metrics import store
from tests.fixtures.people import make_user

WEBHOOKS = CHANNELS["webhook"]

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def alice(alice):
    alice.email = "alice@example.test"
    alice.save()
    return alice


@pytest.fixture
def active(webhook_receiver, active):
    """The shared live www, with the receiver started first: its certificate is made on the
    real clock, which TLS reads, before the fixture stops the clock."""
    return active


@pytest.fixture
def endpoint(shop, webhook_receiver):
    return endpoint_create(
        project=shop, url=webhook_receiver.url, events=[EventType.DOMAIN_FAILING]
    )


def attempts_counted() -> dict[str, float]:
    """petstore_webhook_delivery_attempts_total by outcome, as this process counted them."""
    return {
        outcome: store.REGISTRY.get_sample_value(
            "petstore_webhook_delivery_attempts_total", {"outcome": outcome}
        )
        or 0.0
        for outcome in ("delivered", "failed")
    }


def beat(time_machine, at: datetime) -> None:
    """What beat and the webhooks worker do at `at`: dispatch, then every due attempt."""
    time_machine.move_to(at, tick=False)
    for delivery_id in WEBHOOKS.due():
        tasks.deliver("webhook", delivery_id)


def test_a_live_domain_whose_cname_leaves_sends_one_signed_delivery(
    active, endpoint, webhook_receiver, dns_server, time_machine
):
    dns_server.remove("www.example.test")
    failed_at = T0 + timedelta(hours=6)
    time_machine.move_to(failed_at, tick=False)
    tasks.check_domains([active.pk])  # the sweep's batch, as the worker runs it
    beat(time_machine, failed_at + timedelta(seconds=15))
    beat(time_machine, failed_at + timedelta(minutes=5))  # nothing more to send

    [received] = webhook_receiver.requests
    assert received.path == "/hooks"
    headers = {
        k: received.headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")
    }
    body = Webhook(endpoint.secret).verify(received.body, headers)
    assert body["type"] == "domain.failing"
    assert body["data"]["project"] == "shop"
    assert body["data"]["domain"] == "www.example.test"
    assert body["data"]["stops_serving_at"].startswith("2026-11-04T18:00")
    assert received.headers["content-type"] == "application/json"
    [logged] = Delivery.objects.filter(channel="webhook")
    assert (
        logged.state,
        logged.attempt_log.latest("attempted_at", "pk").status_code,
        logged.attempts,
    ) == ("delivered", 200, 1)
    assert logged.attempt_log.latest("attempted_at", "pk").response == "thanks"


def test_a_wrong_secret_fails_the_verifier(active, endpoint, webhook_receiver, shop, time_machine):
    record_owner_event(project=shop, domain=active, type=EventType.DOMAIN_FAILING)
    beat(time_machine, T0 + timedelta(seconds=1))
    [received] = webhook_receiver.requests
    other = endpoint_create(
        project=shop, url=webhook_receiver.url + "?other", events=["domain.active"]
    )
    with pytest.raises(Exception, match="signature"):
        Webhook(other.secret).verify(received.body, received.headers)


def test_events_not_subscribed_are_not_sent(active, endpoint, webhook_receiver, shop, time_machine):
    record_owner_event(project=shop, domain=active, type=EventType.CLAIM_EXPIRED)
    beat(time_machine, T0 + timedelta(seconds=1))
    assert webhook_receiver.requests == []


def test_a_failing_receiver_is_retried_on_the_backoff_and_logged(
    active, endpoint, webhook_receiver, shop, time_machine
):
    webhook_receiver.status = 500
    webhook_receiver.answer = b"receiver broke: " + b"x" * 1000
    record_owner_event(project=shop, domain=active, type=EventType.DOMAIN_FAILING)
    at = T0 + timedelta(seconds=1)
    beat(time_machine, at)
    assert len(webhook_receiver.requests) == 1
    # Not before the first backoff (30 s), then within a minute.
    beat(time_machine, at + timedelta(seconds=20))
    assert len(webhook_receiver.requests) == 1
    at += WEBHOOK_RETRY_BACKOFF[0]
    beat(time_machine, at)
    assert len(webhook_receiver.requests) == 2
    for backoff in WEBHOOK_RETRY_BACKOFF[1:]:
        at += backoff
        beat(time_machine, at)
    assert len(webhook_receiver.requests) == WEBHOOKS.max_attempts
    beat(time_machine, at + timedelta(days=1))
    assert len(webhook_receiver.requests) == WEBHOOKS.max_attempts
    # One id for every attempt: the receiver can tell a retry from a new event.
    assert len({r.headers["webhook-id"] for r in webhook_receiver.requests}) == 1
    [logged] = Delivery.objects.filter(channel="webhook")
    assert logged.state == DeliveryState.FAILED
    assert logged.attempt_log.latest("attempted_at", "pk").status_code == 500
    assert logged.attempts == WEBHOOKS.max_attempts
    assert logged.attempt_log.latest("attempted_at", "pk").response.startswith("receiver broke: ")
    assert len(logged.attempt_log.latest("attempted_at", "pk").response) == 500


def test_redeliver_sends_again_now(active, endpoint, webhook_receiver, shop, time_machine):
    record_owner_event(project=shop, domain=active, type=EventType.DOMAIN_FAILING)
    beat(time_machine, T0 + timedelta(seconds=1))
    [logged] = Delivery.objects.filter(channel="webhook")
    delivery_redeliver(delivery=logged)
    beat(time_machine, T0 + timedelta(seconds=2))
    assert len(webhook_receiver.requests) == 2
    first, second = webhook_receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    logged.refresh_from_db()
    assert (logged.state, logged.attempts) == (DeliveryState.DELIVERED, 2)


def test_three_days_of_failures_disable_the_endpoint_and_mail_the_owners_and_admins(
    active, endpoint, webhook_receiver, shop, time_machine, smtp_server
):
    for name, role in (("dave", Role.ADMIN), ("erin", Role.DEVELOPER)):
        user = make_user(name, email=f"{name}@example.test")
        member_add(project=shop, user=user, role=role, actor=None)
    webhook_receiver.status = 503
    at = T0
    # An event a day keeps the endpoint failing for three days.
    for day in range(4):
        at = T0 + timedelta(days=day, seconds=1)
        time_machine.move_to(at, tick=False)
        record_owner_event(project=shop, domain=active, type=EventType.DOMAIN_FAILING)
        beat(time_machine, at)
    endpoint.endpoint.refresh_from_db()
    assert endpoint.endpoint.disabled_at == at
    # One mail to each owner and admin (a developer is not told), none naming another.
    assert sorted(m["To"] for m in smtp_server.messages) == [
        "alice@example.test",
        "dave@example.test",
    ]
    mail = smtp_server.messages[0]
    assert "Webhook endpoint disabled" in mail["Subject"]
    assert webhook_receiver.url in smtp_server.text(mail)
    # Disabled: nothing more is sent, and the mail is not sent twice.
    sent = len(webhook_receiver.requests)
    record_owner_event(project=shop, domain=active, type=EventType.DOMAIN_FAILING)
    beat(time_machine, at + timedelta(days=1))
    assert len(webhook_receiver.requests) == sent
    assert len(smtp_server.messages) == 2


def test_a_success_resets_the_failing_clock(active, endpoint, webhook_receiver, shop, time_machine):
    before = attempts_counted()
    webhook_receiver.status = 500
    record_owner_event(project=shop, domain=active, type=EventType.DOMAIN_FAILING)
    beat(time_machine, T0 + timedelta(seconds=1))
    endpoint.endpoint.refresh_from_db()
    assert endpoint.endpoint.failing_since is not None
    webhook_receiver.status = 204
    beat(time_machine, T0 + timedelta(minutes=1))
    endpoint.endpoint.refresh_from_db()
    assert endpoint.endpoint.failing_since is None
    # Each attempt counted by its outcome: what PetstoreWebhookDeliveriesFailing watches.
    after = attempts_counted()
    assert {outcome: after[outcome] - before[outcome] for outcome in after} == {
        "delivered": 1,
        "failed": 1,
    }
    assert json.loads(webhook_receiver.requests[-1].body)["type"] == "domain.failing"
