"""Webhooks: a project's endpoints (each delivery to one is a Delivery row,
domains/models/deliveries.py)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

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
