"""End to end: a real worker checks a live domain whose CNAME left, and the beat's send task,
on the same worker, mails the owner through the loopback SMTP server."""

from __future__ import annotations

import pytest
from django.utils import timezone

from domains import tasks
from domains.choices import DeliveryState, State
from domains.models import Delivery, OwnerEvent
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET
from tests.processes import wait_for


@pytest.fixture
def alice(alice):
    alice.email = "alice@example.test"
    alice.save()
    return alice


def test_a_worker_mails_the_owner_when_a_live_domains_cname_leaves(
    smtp_server, monkeypatch, start_worker, dns_server, shop, alice
):
    monkeypatch.setenv("EMAIL_URL", f"smtp://127.0.0.1:{smtp_server.port}")
    start_worker()
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    tasks.request_check(domain=domain, actor=alice)

    def active() -> bool:
        domain.refresh_from_db()
        return domain.state == State.ACTIVE

    wait_for(active, timeout=60, what="the domain to become active")
    dns_server.remove("www.example.test")
    tasks.check_domain.delay(domain.pk)
    failing = OwnerEvent.objects.filter(domain=domain, type="domain.failing")
    wait_for(failing.exists, timeout=30, what="the domain.failing event")
    # The digest window (two minutes) has passed.
    Delivery.objects.filter(channel="email").update(next_attempt_at=timezone.now())
    tasks.dispatch_deliveries.delay()
    wait_for(lambda: smtp_server.messages, timeout=30, what="the mail")

    [mail] = smtp_server.messages
    domain.refresh_from_db()
    stops = domain.stops_serving_at()
    assert stops is not None
    assert f"Stops serving at: {stops:%Y-%m-%d %H:%M} UTC" in smtp_server.text(mail)
    mails = Delivery.objects.filter(channel="email")
    assert mails.get(event=failing.get()).state == DeliveryState.DELIVERED
    # domain.active is not among the default choices: recorded, not mailed.
    assert mails.get(event__type="domain.active").state == DeliveryState.SKIPPED
