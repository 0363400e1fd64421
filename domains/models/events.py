"""What happened to a project's domains: the audit trail, the owner's outbox and who is
told what by email."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from domains.choices import ACTION_NEEDED_EVENTS, Action, EventType
from domains.models.domains import Domain
from domains.models.projects import Project
from domains.querysets import NotificationPreferenceQuerySet
from petstore import sentences


class DomainEvent(models.Model):
    """The audit trail: who did what to which domain, and what the platform did."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    domain = models.ForeignKey(
        Domain, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    hostname = models.CharField(max_length=253, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    action = models.CharField(max_length=40, choices=Action.choices)
    message = models.TextField(blank=True)
    # The message as a sentence to read in any language (petstore/sentences.py); empty on a
    # line written before sentences were kept, whose message is shown as it is.
    said = models.JSONField(null=True, blank=True)
    # A rival claim's line: which project added the name (never shown to the owner; one
    # line per name and rival project per day). No foreign key: deleting that project
    # leaves the line as it was.
    rival_project_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.hostname} {self.action}"

    @property
    def message_shown(self) -> str:
        """The line's message in the reader's language."""
        return sentences.shown(self.message, self.said)


class OwnerEvent(models.Model):
    """The outbox of what the owner is told: one row per event, written by the service that
    made the change, in its transaction, with a Delivery per channel and target
    (domains/models/deliveries.py), so one event feeds every channel."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="owner_events")
    domain = models.ForeignKey(
        Domain, null=True, blank=True, on_delete=models.SET_NULL, related_name="owner_events"
    )
    # Kept as text: the domain row may be gone (an expired claim, Remove).
    hostname = models.CharField(max_length=253)
    type = models.CharField(max_length=40, choices=EventType.choices)
    occurred_at = models.DateTimeField(default=timezone.now)
    # What happened and what to do in plain words, the domain page's path, and the fields
    # of the type (stops_serving_at, expires_at, reason): the body every channel sends.
    data = models.JSONField(default=dict)
    # The sentences of `data` (what, reason, findings), to say in the reader's language
    # (petstore/sentences.py); `data` keeps them in English, for the webhooks. Empty on an
    # event written before sentences were kept: its mail says `data` as it is.
    said = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-occurred_at", "-pk"]
        indexes = [
            models.Index(
                fields=["project", "hostname", "type"], name="domains_owner_event_subject"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.occurred_at:%Y-%m-%d %H:%M} {self.hostname} {self.type}"


def default_email_events() -> list[str]:
    return sorted(ACTION_NEEDED_EVENTS)


class NotificationPreference(models.Model):
    """Which events reach a user by email (Settings → Notifications); a user without a row
    gets the default: everything that needs action."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    email_events = models.JSONField(default=default_email_events)
    updated_at = models.DateTimeField(auto_now=True)

    objects = NotificationPreferenceQuerySet.as_manager()

    def __str__(self) -> str:
        return f"notifications of {self.user_id}"


def new_link_secret() -> str:
    """The secret an owner-address link carries: random, so the link says nothing of whose
    it is or where it points."""
    return secrets.token_urlsafe(32)


def link_digest(secret: str) -> str:
    """What the database keeps of a link's secret: a copy of the table (a backup) holds no
    link that works."""
    return hashlib.sha256(secret.encode()).hexdigest()


class OwnerEmailChange(models.Model):
    """A link mailed to a new owner address (domains/services/notifications.py): confirmed,
    owner mail goes to `email` instead of `was`. Closed when it is used and when the address
    changes by any link, so each works once and none survives a later change. Rows stay until
    the links are too old to open: the hour's count of mails sent is a count of them."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="owner_email_changes"
    )
    digest = models.CharField(max_length=64, unique=True)
    email = models.CharField(max_length=254)
    was = models.CharField(max_length=254, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "created_at"], name="owner_email_change_user")]

    def __str__(self) -> str:
        return f"owner address change of {self.user_id}"
