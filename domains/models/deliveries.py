"""The deliveries of the owner events: one row per (event, channel, target), and every
attempt of it (domains/channels/ sends them).

The shape of Saleor's EventDelivery and EventDeliveryAttempt: the delivery is the unit
that is claimed, retried and shown; each attempt is a row of its own, so a delivery's log
says what happened at every try, not only at the last one.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from domains.choices import DeliveryState
from domains.models.events import OwnerEvent
from petstore import sentences


class Delivery(models.Model):
    """One owner event for one target of one channel. `target_id` is what the channel
    delivers to, named by the channel (domains/channels/): a Membership for email (the
    member's address, read when the mail is sent), a WebhookEndpoint for webhooks. No
    foreign key: a channel added later names its own targets without a migration here;
    the event's foreign key takes the row with its project, and the webhook service
    removes an endpoint's rows with it."""

    event = models.ForeignKey(OwnerEvent, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=20)
    target_id = models.BigIntegerField()
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    # The next attempt's time (the digest window, a retry's backoff); while sending, the
    # end of the claim's lease.
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claim = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # When it was delivered, skipped or failed.
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["event", "channel", "target_id"], name="domains_delivery_once"
            )
        ]
        indexes = [
            models.Index(
                fields=["channel", "state", "next_attempt_at"], name="domains_delivery_due"
            ),
            models.Index(fields=["channel", "target_id"], name="domains_delivery_target"),
        ]

    def __str__(self) -> str:
        return f"{self.channel}:{self.target_id} {self.event_id} {self.state}"

    @property
    def message_id(self) -> str:
        """The event's id as receivers see it (`webhook-id`): the same on every attempt
        and every target, so a receiver dedupes on it."""
        return f"evt_{self.event_id}"

    @property
    def last_attempt(self) -> DeliveryAttempt | None:
        """The latest attempt (from the prefetched log when there is one)."""
        attempts = list(self.attempt_log.all())
        return max(attempts, key=lambda a: (a.attempted_at, a.pk)) if attempts else None


class DeliveryAttempt(models.Model):
    """One try of a delivery: when, how long, the answer's status and its first bytes (or
    why there was none: a timeout, a refused address, the mail server's words)."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    attempted_at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField(default=False)
    # The receiver's HTTP status; none for a mail or an attempt that got no answer.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    # Bounded by DELIVERY_RESPONSE_EXCERPT (domains/channels/base.py) when written.
    response = models.TextField(blank=True)
    # The platform's own reason as a sentence (petstore/sentences.py), when it gave one.
    said = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["attempted_at", "pk"]

    def __str__(self) -> str:
        return f"{self.delivery_id} {self.attempted_at:%Y-%m-%d %H:%M:%S} {self.status_code}"

    @property
    def response_shown(self) -> str:
        """The answer as the delivery log shows it: the platform's reason in the reader's
        language, a receiver's answer as it came."""
        return sentences.shown(self.response, self.said)
