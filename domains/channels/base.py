"""The channel engine: what every channel does the same way, written once.

A channel (email.py, webhooks.py, one module each) says four things: which targets an
event goes to (`targets`), which of its deliveries may be attempted now (`deliverable`),
how one attempt is made (`send`, returning an Outcome), and what follows a recorded
outcome (`recorded`). This class owns the rest, for every channel alike:

- creating the deliveries: one per (event, target), unsaved, for the caller's INSERT in the
  event's own transaction (domains/channels/__init__.py `deliveries_create`);
- the claim: one conditional UPDATE (waiting, due, or a claim whose lease ended → sending
  with a claim token), so a message queued twice, or two workers, make one attempt;
- the attempt log: a DeliveryAttempt per delivery per attempt, its answer bounded, and the
  attempt counted by outcome in the channel's family (`attempts_counted`, domains/metrics.py);
- the backoff, with jitter, the attempts and failure: after `max_attempts` the delivery
  fails and, for a channel that asks (`count_failures`), the failure is counted;
- fairness: `slot()` is held from before the claim until the outcome is recorded; with no
  slot free the delivery is due again `busy_retry` later, not counted as an attempt.

The database is the record: beat's `dispatch_deliveries` (domains/tasks.py) queues every
due delivery of every channel, so a lost message only waits for the next beat.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from prometheus_client import Counter

from domains import metrics
from domains.choices import WAITING_DELIVERY_STATES, DeliveryState
from domains.models import Delivery, DeliveryAttempt, OwnerEvent
from petstore.models import TaskFailure
from petstore.sentences import Sentence
from petstore.taskfailures import task_failure_record

log = logging.getLogger(__name__)

# The first characters of an answer kept in the attempt log.
DELIVERY_RESPONSE_EXCERPT = 500
# A retry is due up to this share of its backoff early, never late: the failures of one
# outage spread out instead of coming back together, and the documented delays stay
# upper bounds.
JITTER = 0.1


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: the receiver's answer, or why there was none."""

    ok: bool
    status_code: int | None = None
    duration_ms: int = 0
    response: str = ""
    # The platform's own words for why there was no answer, read in the reader's language on
    # the delivery log (`response` keeps their English, and a receiver's words as they came).
    said: Sentence | None = None


class Channel:
    name: ClassVar[str]
    label: ClassVar[str]
    # Delays before the n-th retry; after the last one the delivery fails.
    backoff: ClassVar[tuple[timedelta, ...]]
    # A claim not finished in this long (its worker died) is taken over.
    lease: ClassVar[timedelta] = timedelta(minutes=1)
    # How long after the event its first attempt is due (email: the digest window).
    first_delay: ClassVar[timedelta] = timedelta(0)
    # How soon a delivery refused a slot is due again.
    busy_retry: ClassVar[timedelta] = timedelta(seconds=5)
    # A target's waiting deliveries are claimed and sent together, as one attempt.
    batched: ClassVar[bool] = False
    # A delivery that fails for good is counted in the task failures.
    count_failures: ClassVar[bool] = False
    # Every attempt, by outcome (delivered, failed), in the channel's family: what the
    # delivery alerts watch (a channel without one is not counted).
    attempts_counted: ClassVar[Counter | None] = None

    @property
    def max_attempts(self) -> int:
        return len(self.backoff) + 1

    @property
    def queue(self) -> str:
        """The Celery queue of its attempts."""
        return settings.CELERY_TASK_DEFAULT_QUEUE

    # --- What a channel says ----------------------------------------------------------

    def targets(self, events: Sequence[OwnerEvent]) -> Iterable[tuple[OwnerEvent, int]]:
        """(event, target id) for every target each event goes to."""
        raise NotImplementedError

    def deliverable(self, deliveries: QuerySet[Delivery]) -> QuerySet[Delivery]:
        """Those of `deliveries` that may be attempted at all (webhooks: enabled endpoints)."""
        return deliveries

    def slot(self, delivery: Delivery) -> AbstractContextManager[bool]:
        """A place for one attempt, held while it runs; False when none is free."""
        return nullcontext(True)

    def choose(
        self, deliveries: list[Delivery], now: datetime
    ) -> tuple[list[Delivery], list[Delivery]]:
        """The claimed deliveries split into those to send and those set aside (skipped)."""
        return deliveries, []

    def send(self, deliveries: list[Delivery], now: datetime) -> Outcome:
        """One attempt of the claimed deliveries (one, unless `batched`)."""
        raise NotImplementedError

    def recorded(
        self, deliveries: list[Delivery], outcome: Outcome, now: datetime
    ) -> Callable[[], None] | None:
        """Inside the transaction that records the outcome; what it returns runs after."""
        return None

    # --- The engine -------------------------------------------------------------------

    def build(self, events: Sequence[OwnerEvent]) -> list[Delivery]:
        """The deliveries of `events`, unsaved (the caller inserts them in one statement)."""
        return [
            Delivery(
                event=event,
                channel=self.name,
                target_id=target_id,
                next_attempt_at=event.occurred_at + self.first_delay,
            )
            for event, target_id in self.targets(events)
        ]

    def _waiting(self, now: datetime) -> QuerySet[Delivery]:
        return self.deliverable(
            Delivery.objects.filter(
                channel=self.name, state__in=WAITING_DELIVERY_STATES, next_attempt_at__lte=now
            )
        )

    def due(self, *, now: datetime | None = None) -> list[int]:
        """The deliveries to attempt now, oldest due first; for a batched channel, one per
        target (its attempt takes the target's other waiting deliveries with it)."""
        rows = self._waiting(now or timezone.now()).order_by("next_attempt_at", "pk")
        if not self.batched:
            return list(rows.values_list("pk", flat=True))
        leaders: dict[int, int] = {}
        for pk, target_id in rows.values_list("pk", "target_id"):
            leaders.setdefault(target_id, pk)
        return list(leaders.values())

    def _batch(self, leader: Delivery, due_now: QuerySet[Delivery], now: datetime):
        if not self.batched:
            return due_now
        waiting = Q(state=DeliveryState.PENDING) | Q(
            state=DeliveryState.SENDING, next_attempt_at__lte=now
        )
        return Delivery.objects.filter(waiting, channel=self.name, target_id=leader.target_id)

    def deliver(self, *, delivery_id: int, now: datetime | None = None) -> Delivery | None:
        """One attempt of a due delivery, if this call claims it; the delivery as recorded."""
        now = now or timezone.now()
        due_now = self._waiting(now).filter(pk=delivery_id)
        leader = due_now.first()
        if leader is None:
            return None
        with self.slot(leader) as free:
            if not free:  # due again shortly; the beat (or a queued message) tries it then
                due_now.update(next_attempt_at=now + self.busy_retry)
                return None
            claim = uuid.uuid4()
            # The conditional UPDATE: a concurrent worker that claimed first changed the
            # state or the lease, so this statement no longer matches those rows.
            self._batch(leader, due_now, now).update(
                state=DeliveryState.SENDING, claim=claim, next_attempt_at=now + self.lease
            )
            claimed = list(
                Delivery.objects.filter(claim=claim)
                .select_related("event", "event__project")
                .order_by("event__occurred_at", "pk")
            )
            if not claimed:
                return None
            to_send, skipped = self.choose(claimed, now)
            self._finish(claim, skipped, DeliveryState.SKIPPED, now)
            if to_send:
                self._record(claim, to_send, self.send(to_send, now), now)
        return Delivery.objects.filter(pk=delivery_id).first()

    def retry_at(self, attempts: int, now: datetime) -> datetime:
        """When the retry after the `attempts`-th failed attempt is due."""
        delay = self.backoff[min(attempts, len(self.backoff)) - 1]
        return now + delay * (1 - JITTER * random.random())

    def _finish(self, claim: uuid.UUID, rows: list[Delivery], state: str, now: datetime) -> None:
        if rows:
            Delivery.objects.filter(claim=claim, pk__in=[d.pk for d in rows]).update(
                state=state, claim=None, finished_at=now
            )

    def _record(
        self, claim: uuid.UUID, rows: list[Delivery], outcome: Outcome, now: datetime
    ) -> None:
        attempts = max(d.attempts for d in rows) + 1
        fields: dict[str, object] = {"attempts": attempts, "claim": None}
        failed = False
        if outcome.ok:
            fields |= {"state": DeliveryState.DELIVERED, "finished_at": now}
        elif attempts >= self.max_attempts:
            fields |= {"state": DeliveryState.FAILED, "finished_at": now}
            failed = True
        else:
            fields |= {
                "state": DeliveryState.PENDING,
                "next_attempt_at": self.retry_at(attempts, now),
            }
        excerpt = outcome.response[:DELIVERY_RESPONSE_EXCERPT]
        with transaction.atomic():
            Delivery.objects.filter(claim=claim, pk__in=[d.pk for d in rows]).update(**fields)
            DeliveryAttempt.objects.bulk_create(
                DeliveryAttempt(
                    delivery_id=d.pk,
                    attempted_at=now,
                    ok=outcome.ok,
                    status_code=outcome.status_code,
                    duration_ms=outcome.duration_ms,
                    response=excerpt,
                    said=outcome.said.stored() if outcome.said is not None else None,
                )
                for d in rows
            )
            after = self.recorded(rows, outcome, now)
        if self.attempts_counted is not None:
            metrics.delivery_attempted(self.attempts_counted, ok=outcome.ok)
        if after is not None:  # after the commit: it never holds the rows
            after()
        if failed and self.count_failures:
            log.error(
                "%s: giving up %d deliveries after %d attempts", self.name, len(rows), attempts
            )
            task_failure_record(
                task_name=f"domains.channels.{self.name}",
                kind=TaskFailure.Kind.FAILED,
                error=f"{len(rows)} deliveries, {attempts} attempts: {excerpt}",
            )
