"""The owner's choice of what reaches them (Settings → Notifications)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User

from domains.models import NotificationPreference
from domains.services.events import event_types_clean


def notification_preference_save(
    *, user: User, email_events: Iterable[str]
) -> NotificationPreference:
    """Which event types reach `user` by email; any other value is refused."""
    chosen = event_types_clean(email_events)
    preference, _ = NotificationPreference.objects.update_or_create(
        user=user, defaults={"email_events": chosen}
    )
    return preference
