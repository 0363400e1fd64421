"""Webhooks: a project's endpoints and the delivery of each owner event to each of them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from domains.choices import DeliveryState
from domains.models.events import OwnerEvent
from domains.models.projects import Project


class WebhookEndpoint(models.Model):
    """An HTTPS address of the project's that receives the events it chose, signed with its
    secret (Standard Webhooks; domains/webhooks/). The secret is kept as-is: the process
    that signs must read it, and it is the receiver's secret as much as ours
    (docs/decisions/webhooks.md)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list)
    secret = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)
    disabled_at = models.DateTimeField(null=True, blank=True)
    # The first failed attempt since the last success: WEBHOOK_DISABLE_AFTER later, disabled.
    failing_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.project_id} {self.url}"

    @property
    def enabled(self) -> bool:
        return self.disabled_at is None


class WebhookDelivery(models.Model):
    """The previous release's delivery of one event to one endpoint. Read by no code: its
    rows were carried into Delivery (migration 0013), and the table stays one release so
    the previous release's workers, still running during a rolling deploy, keep working;
    the release that drops it carries over once more what they wrote meanwhile."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="legacy_deliveries"
    )
    event = models.ForeignKey(
        OwnerEvent, on_delete=models.CASCADE, related_name="legacy_webhook_deliveries"
    )
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    # The next attempt's time; while sending, the end of the claim's lease.
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claim = models.UUIDField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # The first bytes of the answer, or why there was none (a timeout, a refused address).
    response = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    attempted_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event"], name="domains_webhook_delivery_once"
            )
        ]
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="domains_webhook_due"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} {self.event_id} {self.state}"

    @property
    def message_id(self) -> str:
        """The `webhook-id`: the event's, the same on every attempt and every endpoint
        (a receiver dedupes on it)."""
        return f"evt_{self.event_id}"
