"""End to end: beat's hourly task, on a real worker, tells the project that a key ends within
a week, and the owner's mail carries it."""

from __future__ import annotations

from django.utils import timezone

from domains import tasks
from domains.choices import DeliveryState, EventType
from domains.models import Delivery, OwnerEvent
from domains.services.keys import key_create
from petstore.apikeys.models import ApiKey
from tests.processes import wait_for


def test_beat_schedules_the_notice(settings):
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks.tell_expiring_keys.name in scheduled


def test_a_worker_tells_the_owner_by_mail_a_week_before_a_key_ends(
    smtp_server, monkeypatch, start_worker, shop, alice
):
    alice.email = "alice@example.test"
    alice.save()
    monkeypatch.setenv("EMAIL_URL", f"smtp://127.0.0.1:{smtp_server.port}")
    key = key_create(user=alice, name="deploy bot", days=6).api_key
    start_worker()

    tasks.tell_expiring_keys.delay()
    told = OwnerEvent.objects.filter(type=EventType.KEY_EXPIRING, project=shop)
    wait_for(told.exists, timeout=30, what="the key.expiring event")
    Delivery.objects.filter(channel="email").update(next_attempt_at=timezone.now())
    tasks.dispatch_deliveries.delay()
    wait_for(lambda: smtp_server.messages, timeout=30, what="the mail")

    [mail] = smtp_server.messages
    text = smtp_server.text(mail)
    assert f"{key.display_prefix}: An API key ends soon" in text
    assert "deploy bot" in text and f"{key.expires_at:%Y-%m-%d %H:%M} UTC" in text
    assert "Make a new key (Settings → API keys)" in text
    # The worker marks the delivery after the server took the mail: wait for that write.
    delivered = Delivery.objects.filter(event=told.get(), state=DeliveryState.DELIVERED)
    wait_for(delivered.exists, timeout=30, what="the delivery marked delivered")
    assert ApiKey.objects.get(pk=key.pk).expiry_told_at is not None
