"""The channels that tell owners about their events, registered in one table.

Every channel is one module here over the engine in base.py (claim, lease, backoff with
jitter, attempts, failure, the attempt log): email.py and webhooks.py. An owner event
gets a Delivery per channel and target in the transaction that records it
(`deliveries_create`, called by domains/services/events.py); beat's dispatch queues
every due one (domains/tasks.py). Adding a channel: a module with a Channel subclass, an
entry in CHANNELS, a form for its targets and a template for its message
(docs/decisions/notifications.md).

A layer of its own (tests/repository/test_architecture.py): it writes only the delivery rows and
what follows an attempt, and imports the models, the choices and its transports
(domains/webhooks/), never the services, selectors, tasks or screens.
"""

from __future__ import annotations

from collections.abc import Sequence

from domains.channels.base import Channel, Outcome
from domains.channels.email import EmailChannel
from domains.channels.webhooks import WebhookChannel
from domains.models import Delivery, OwnerEvent

CHANNELS: dict[str, Channel] = {
    channel.name: channel for channel in (EmailChannel(), WebhookChannel())
}

__all__ = ["CHANNELS", "Channel", "Outcome", "deliveries_create"]


def deliveries_create(events: Sequence[OwnerEvent]) -> int:
    """The deliveries of saved events to every channel's targets, in one INSERT (a unique
    constraint on (event, channel, target) makes a second call harmless)."""
    rows = [row for channel in CHANNELS.values() for row in channel.build(events)]
    return len(Delivery.objects.bulk_create(rows, ignore_conflicts=True)) if rows else 0
