"""Sending the owner events by email: one digest per project, claimed with a conditional
UPDATE so two workers never send one event twice.

A project is due when its oldest waiting event has waited DIGEST_WINDOW: every event of
the project waiting then goes out in one message. Before the message is built, the events
the owner did not choose, and those whose type was mailed for the same host name within
EVENT_REPEAT_AFTER, are set aside (skipped). An SMTP failure puts the claimed events back
with a backoff (the task retries, and the beat sweep finds them due anyway); after
MAX_ATTEMPTS they are marked failed and counted in the task failures.
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from domains.choices import ACTION_NEEDED_EVENTS, EmailState
from domains.models import NotificationPreference, OwnerEvent, Project
from domains.notifications.digest import digest_message
from domains.policy import EVENT_REPEAT_AFTER
from domains.retry import RetryLater
from petstore.models import TaskFailure
from petstore.taskfailures import describe, task_failure_record

log = logging.getLogger(__name__)

# A claim not finished in this long (the worker died) is taken over by the next sweep.
LEASE = timedelta(minutes=5)
# Delays before the n-th retry of a failed send; after the last one, the events fail.
RETRY_BACKOFF = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(hours=3),
)
MAX_ATTEMPTS = len(RETRY_BACKOFF) + 1


def retry_countdown(retries: int) -> float:
    return RETRY_BACKOFF[min(retries, len(RETRY_BACKOFF) - 1)].total_seconds()


def projects_due(*, now: datetime | None = None) -> list[int]:
    """The projects with an event whose mail is due (or whose claim's lease ended)."""
    due = OwnerEvent.objects.email_due(now or timezone.now())
    return sorted(set(due.values_list("project_id", flat=True)))


def email_choices(user_id: int) -> frozenset[str]:
    """The event types this user receives by email (their choice, or the default)."""
    chosen = (
        NotificationPreference.objects.filter(user_id=user_id)
        .values_list("email_events", flat=True)
        .first()
    )
    return ACTION_NEEDED_EVENTS if chosen is None else frozenset(chosen)


def digest_send(*, project_id: int, now: datetime | None = None) -> int:
    """Send the project's waiting events as one message, if it is due; the number of events
    mailed. Raises RetryLater when the mail server failed (the events wait for a retry)."""
    now = now or timezone.now()
    if not OwnerEvent.objects.filter(project_id=project_id).email_due(now).exists():
        return 0
    claim = uuid.uuid4()
    waiting = Q(email_state=EmailState.PENDING) | Q(
        email_state=EmailState.SENDING, email_due_at__lte=now
    )
    # The conditional UPDATE: a concurrent sender that claimed a row first changed its
    # state, so this statement no longer matches it.
    OwnerEvent.objects.filter(waiting, project_id=project_id).update(
        email_state=EmailState.SENDING, email_claim=claim, email_due_at=now + LEASE
    )
    claimed = list(OwnerEvent.objects.filter(email_claim=claim).order_by("occurred_at", "pk"))
    if not claimed:
        return 0
    project = Project.objects.select_related("owner").get(pk=project_id)
    to_send, skipped = _choose(project, claimed, now)
    _finish(claim, skipped, EmailState.SKIPPED, now)
    if not to_send:
        return 0
    message = digest_message(project=project, events=to_send, to=project.owner.email)
    try:
        message.send()
    except (smtplib.SMTPException, OSError) as exc:
        _failed(claim, to_send, exc, now)
        raise RetryLater(f"mail to the owner of {project.slug} failed: {describe(exc)}") from exc
    _finish(claim, to_send, EmailState.SENT, now)
    return len(to_send)


def _choose(
    project: Project, claimed: list[OwnerEvent], now: datetime
) -> tuple[list[OwnerEvent], list[OwnerEvent]]:
    """Split the claimed events into those to mail and those set aside."""
    if not project.owner.email:
        return [], claimed
    chosen = email_choices(project.owner_id)
    told = set(
        OwnerEvent.objects.emailed()
        .filter(project=project, emailed_at__gt=now - EVENT_REPEAT_AFTER)
        .values_list("hostname", "type")
    )
    to_send, skipped = [], []
    for event in claimed:
        subject = (event.hostname, event.type)
        if event.type not in chosen or subject in told:
            skipped.append(event)
        else:
            told.add(subject)
            to_send.append(event)
    return to_send, skipped


def _finish(claim: uuid.UUID, events: list[OwnerEvent], state: str, now: datetime) -> None:
    if events:
        OwnerEvent.objects.filter(email_claim=claim, pk__in=[e.pk for e in events]).update(
            email_state=state, emailed_at=now if state == EmailState.SENT else None
        )


def _failed(claim: uuid.UUID, events: list[OwnerEvent], exc: BaseException, now: datetime) -> None:
    """Put the events back for a retry after the backoff, or fail them after the last."""
    attempts = max(event.email_attempts for event in events) + 1
    ours = OwnerEvent.objects.filter(email_claim=claim, pk__in=[e.pk for e in events])
    if attempts >= MAX_ATTEMPTS:
        ours.update(email_state=EmailState.FAILED, email_attempts=attempts)
        log.error("giving up mailing %d events after %d attempts", len(events), attempts)
        task_failure_record(
            task_name=f"{__name__}.digest_send",
            kind=TaskFailure.Kind.FAILED,
            error=f"{len(events)} events, {attempts} attempts: {describe(exc)}",
        )
        return
    ours.update(
        email_state=EmailState.PENDING,
        email_attempts=attempts,
        email_due_at=now + RETRY_BACKOFF[attempts - 1],
    )
