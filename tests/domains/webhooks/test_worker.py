"""The webhooks queue's own worker (a real `celery worker -Q webhooks` process) delivers
what beat's dispatch queued: the path production runs."""

from __future__ import annotations

import time

import pytest
from standardwebhooks import Webhook

from domains import tasks
from domains.choices import DeliveryState, EventType
from domains.models import Delivery
from domains.services.events import record_owner_event
from domains.services.webhooks import endpoint_create


@pytest.mark.timeout(120)
def test_the_webhooks_worker_delivers_what_beat_queued(webhook_receiver, start_worker, shop, www):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    start_worker("webhooks")
    tasks.dispatch_deliveries.run()  # beat's task: queues the due attempt on its queue
    deadline = time.monotonic() + 30
    while not webhook_receiver.requests and time.monotonic() < deadline:
        time.sleep(0.2)
    [received] = webhook_receiver.requests
    assert Webhook(made.secret).verify(received.body, received.headers)["type"] == (
        "domain.failing"
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        logged = Delivery.objects.get(channel="webhook")
        if logged.state == DeliveryState.DELIVERED:
            break
        time.sleep(0.2)
    assert (logged.state, logged.attempt_log.latest("attempted_at", "pk").status_code) == (
        DeliveryState.DELIVERED,
        200,
    )
