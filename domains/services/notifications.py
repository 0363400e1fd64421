"""The owner's choice of what reaches them (Settings → Notifications)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from domains.choices import EventType
from domains.models import NotificationPreference


def notification_preference_save(
    *, user: User, email_events: Iterable[str]
) -> NotificationPreference:
    """Which event types reach `user` by email; any other value is refused."""
    chosen = sorted(set(email_events))
    unknown = [value for value in chosen if value not in EventType.values]
    if unknown:
        raise ValidationError(
            f"Unknown event type: {', '.join(unknown)}.", code="unknown_event_type"
        )
    preference, _ = NotificationPreference.objects.update_or_create(
        user=user, defaults={"email_events": chosen}
    )
    return preference
