"""Adding a channel is one module (a Channel subclass), one form (its target's settings)
and one template (its message): here a pager channel that exists only in this test,
registered in CHANNELS, made deliveries by the services' own event writer and delivered,
retried and logged by the engine like email and webhooks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django import forms
from django.template import engines

from domains import tasks
from domains.channels import CHANNELS, Channel, Outcome
from domains.choices import DeliveryState, EventType
from domains.models import Delivery, OwnerEvent
from domains.services.events import record_owner_event
from tests.fixtures.domains import T0

pytestmark = pytest.mark.django_db


class PagerForm(forms.Form):
    """The form: where a project's pages go."""

    number = forms.RegexField(regex=r"^\+[0-9]{6,15}$")


class PagerChannel(Channel):
    """The module: a page per event to the project's pager number."""

    name = "pager"
    label = "Pager"
    backoff = (timedelta(seconds=10),)

    def __init__(self, numbers: dict[int, str]) -> None:
        self.numbers, self.down = numbers, False
        self.sent: list[tuple[str, str]] = []

    def targets(self, events: Sequence[OwnerEvent]) -> Iterable[tuple[OwnerEvent, int]]:
        return [(e, e.project_id) for e in events if e.project_id in self.numbers]

    def send(self, deliveries, now: datetime) -> Outcome:
        [delivery] = deliveries
        template = engines["django"].from_string(Path(__file__).with_name("pager.txt").read_text())
        if self.down:
            return Outcome(ok=False, status_code=503, response="pager gateway down")
        self.sent.append(
            (self.numbers[delivery.target_id], template.render({"event": delivery.event}))
        )
        return Outcome(ok=True, status_code=200, response="queued")


@pytest.fixture
def pager(shop, monkeypatch):
    form = PagerForm({"number": "+15550100"})
    assert form.is_valid()
    channel = PagerChannel({shop.pk: form.cleaned_data["number"]})
    monkeypatch.setitem(CHANNELS, channel.name, channel)
    return channel


def beat(time_machine, at: datetime) -> None:
    time_machine.move_to(at, tick=False)
    for delivery_id in CHANNELS["pager"].due():
        tasks.deliver("pager", delivery_id)


def test_a_registered_channel_gets_each_event_through_the_engine(pager, shop, www, time_machine):
    time_machine.move_to(T0, tick=False)
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING, message="DNS left.")
    [delivery] = Delivery.objects.filter(channel="pager")
    assert delivery.target_id == shop.pk  # made in the event's own transaction

    pager.down = True
    beat(time_machine, T0 + timedelta(seconds=1))
    beat(time_machine, T0 + timedelta(seconds=5))  # the backoff is not over
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (DeliveryState.PENDING, 1)

    pager.down = False
    beat(time_machine, T0 + timedelta(seconds=12))
    assert pager.sent == [("+15550100", "www.example.test: DNS left.\n")]
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED
    log = [(a.ok, a.status_code, a.response) for a in delivery.attempt_log.all()]
    assert log == [(False, 503, "pager gateway down"), (True, 200, "queued")]
    beat(time_machine, T0 + timedelta(minutes=5))
    assert len(pager.sent) == 1  # delivered: never again


def test_a_channel_that_gives_up_fails_the_delivery_after_its_last_attempt(
    pager, shop, www, time_machine
):
    time_machine.move_to(T0, tick=False)
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    pager.down = True
    beat(time_machine, T0 + timedelta(seconds=1))
    beat(time_machine, T0 + timedelta(seconds=12))
    delivery = Delivery.objects.get(channel="pager")
    assert (delivery.state, delivery.attempts) == (DeliveryState.FAILED, pager.max_attempts)
    assert delivery.attempt_log.count() == 2


def test_the_retry_is_due_up_to_a_tenth_early_never_late(pager):
    now = T0
    due = {pager.retry_at(1, now) for _ in range(50)}
    assert all(now + timedelta(seconds=9) <= at <= now + timedelta(seconds=10) for at in due)
    assert len(due) > 1  # jittered
