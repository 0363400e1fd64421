"""Reusable reads: the querysets behind `Project.objects` and `Domain.objects`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Self

from django.contrib.auth.models import User
from django.db import models
from django.db.models import F
from django.utils import timezone

from domains.choices import ACTION_NEEDED_EVENTS, LIVE_STATES, CertState, State


class ProjectQuerySet(models.QuerySet):
    def for_member(self, user: User, *, roles: Iterable[str] | None = None) -> Self:
        """The projects `user` is a member of (of one of `roles`, if given), each with `role`,
        theirs on it: one join, so the role is read with the project in the same query."""
        membership: dict[str, Any] = {"memberships__user": user}
        if roles is not None:
            membership["memberships__role__in"] = list(roles)
        return self.filter(**membership).annotate(role=F("memberships__role"))


class DomainQuerySet(models.QuerySet):
    def for_member(self, user: User) -> Self:
        return self.filter(project__memberships__user=user)

    def live(self) -> Self:
        """Domains the platform answers for (domains.choices.LIVE_STATES)."""
        return self.filter(state__in=LIVE_STATES)

    def due_for_check(self, now: datetime | None = None) -> Self:
        """Domains whose next check time has come; failed ones wait for a person."""
        now = now or timezone.now()
        return self.exclude(state=State.FAILED).filter(
            next_check_at__isnull=False, next_check_at__lte=now
        )

    def stuck_issuing(self, older_than: timedelta, now: datetime | None = None) -> Self:
        """Certificate requested long ago and still not issued: the task was lost."""
        now = now or timezone.now()
        return self.filter(state=State.ISSUING, cert_requested_at__lte=now - older_than)

    def never_verified(self, *, older_than: datetime) -> Self:
        """Claims added before `older_than` that never verified (expired claims)."""
        return self.filter(verified_at__isnull=True, created_at__lt=older_than).exclude(
            state__in=LIVE_STATES
        )

    def needing_certificate(self) -> Self:
        """Verified, and no certificate requested yet (not blocked by CAA or the CA)."""
        return self.filter(state=State.VERIFIED, cert_state=CertState.NONE)


class CertificateQuerySet(models.QuerySet):
    def current(self, now: datetime | None = None) -> Self:
        now = now or timezone.now()
        return self.filter(not_before__lte=now, not_after__gt=now)

    def served(self) -> Self:
        """Valid now, the one served first: the latest to expire (the newest renewal)."""
        return self.current().order_by("-not_after", "-pk")


class NotificationPreferenceQuerySet(models.QuerySet):
    def email_events_of(self, user_id: int) -> frozenset[str]:
        """The event types this user receives by email: their choice, or the default
        (everything that needs action)."""
        chosen = self.filter(user_id=user_id).values_list("email_events", flat=True).first()
        return ACTION_NEEDED_EVENTS if chosen is None else frozenset(chosen)
