"""The audit trail and the owner's events: one helper that every write of the domains
feature calls.

An Activity line whose action the owner must hear about (domains.choices.
OWNER_EVENT_OF_ACTION) also writes an owner event, the outbox row, and its deliveries to
every channel's targets (domains/channels/), in the same transaction: the change, the
event and its deliveries commit together or not at all, and sending is left to the
channels' tasks after the commit.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import OuterRef, Subquery
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from domains.channels import deliveries_create
from domains.channels.email import next_step
from domains.choices import (
    AUDIT_ACTION_OF_ACTION,
    OWNER_EVENT_OF_ACTION,
    RECOVERED_FROM,
    Action,
    EventType,
)
from domains.models import Domain, DomainEvent, OwnerEvent, Project
from domains.services.audit import audit_record
from domains.services.bulk import BulkInsert
from petstore.sentences import Sentence, Value, label

_events = BulkInsert(DomainEvent.objects, "domain_events")
# Inside events_in_bulk(): the owner event of each collected Activity line (by its id; the
# line is kept beside it, so its id is not reused), so a line dropped from the batch (its
# savepoint rolled back) drops its owner event too.
_owner_events: ContextVar[dict[int, tuple[DomainEvent, OwnerEvent]] | None] = ContextVar(
    "owner_events", default=None
)


def record_event(
    *,
    project: Project | None = None,
    domain: Domain | None = None,
    hostname: str = "",
    action: str,
    message: str = "",
    said: Sentence | None = None,
    actor: User | None = None,
    rival_project: Project | None = None,
) -> DomainEvent:
    """One Activity line: of `domain` (its project's), or of `project` about a host name
    that has no row any more (Remove, expiry); and its owner event, if it has one. Its
    message is `said` (read in each reader's language), or `message` as it is."""
    if said is not None:
        message = said.english()
    if project is None:
        if domain is None:
            raise ValueError("an event names a domain or a project")
        project = domain.project
    event = DomainEvent(
        project=project,
        domain=domain,
        hostname=hostname or (domain.hostname if domain else ""),
        actor=actor,
        action=action,
        message=message,
        said=said.stored() if said is not None else None,
        rival_project_id=rival_project.pk if rival_project else None,
    )
    _events.save(event)
    if (audit_action := AUDIT_ACTION_OF_ACTION.get(action)) is not None:
        audit_record(project, audit_action, event.hostname)
    event_type = OWNER_EVENT_OF_ACTION.get(action)
    if event_type is None:
        return event
    owner_event = functools.partial(
        owner_event_build,
        project=project,
        domain=domain,
        hostname=event.hostname,
        type=event_type,
        message=message,
        said=said,
    )
    collected = _owner_events.get()
    if collected is None:
        if _worth_telling(event_type, domain):
            _save(owner_event())
    elif event_type != EventType.DOMAIN_RECOVERED or domain is not None:
        # Whether a recovery is worth telling is decided for the whole bulk at its end.
        collected[id(event)] = (event, owner_event())
    return event


def record_owner_event(
    *,
    project: Project,
    domain: Domain | None,
    hostname: str = "",
    type: EventType,
    message: str = "",
    said: Sentence | None = None,
    **fields: Any,
) -> OwnerEvent:
    """An owner event that has no Activity line of its own (a service that records one
    through `record_event` gets it from there). What happened is `said` (read in each
    reader's language), or `message` as it is."""
    owner_event = owner_event_build(
        project=project,
        domain=domain,
        hostname=hostname or (domain.hostname if domain else ""),
        type=type,
        message=said.english() if said is not None else message,
        said=said,
        **fields,
    )
    _save(owner_event)
    return owner_event


def _save(owner_event: OwnerEvent) -> None:
    owner_event.save()
    deliveries_create([owner_event])


def owner_event_build(
    *,
    project: Project,
    domain: Domain | None,
    hostname: str,
    type: EventType,
    message: str,
    said: Sentence | None = None,
    **fields: Any,
) -> OwnerEvent:
    """The outbox row, unsaved: what happened, what to do, the page, and the type's fields;
    its sentences kept beside it (OwnerEvent.said), for the reader's language."""
    # A message without a sentence is said as it is, in every language.
    reason = said or Sentence(message)
    what = _what(type, hostname, reason, message)
    kept: dict[str, Any] = {"what": what.stored()}
    # The row is the webhooks' body too, which stays in the API's language (English),
    # whoever's request made the event; a mail says what to do in its reader's language.
    data: dict[str, Any] = {
        "project": project.slug,
        "hostname": hostname,
        "what": what.english(),
        "what_to_do": _next_step(type, settings.LANGUAGE_CODE),
        "path": _page(project, domain),
    }
    if domain is not None:
        data["state"] = domain.state
        if type == EventType.DOMAIN_FAILING and (stops := domain.stops_serving_at()):
            data["stops_serving_at"] = stops.isoformat()
        if type == EventType.DOMAIN_FAILING:
            # What the zone's own name servers said, in the owner's words (the email, the
            # webhook's body): why it fails, before the owner has to ask.
            diagnosis = domain.check_diagnosis or {}
            found = diagnosis.get("findings", [])
            data["findings"] = [
                {"code": finding["code"], "message": finding["message"]} for finding in found
            ]
            kept["findings"] = (domain.check_said or {}).get("findings")
        if type == EventType.CERTIFICATE_RENEWAL_FAILED:
            data["reason"] = reason.english()
            kept["reason"] = reason.stored()
            if (current := domain.certificate) is not None:
                data["expires_at"] = current.not_after.isoformat()
    data |= {name: _plain(value) for name, value in fields.items()}
    now = timezone.now()
    return OwnerEvent(
        project=project,
        domain=domain,
        hostname=hostname,
        type=type,
        data=data,
        said=kept,
        occurred_at=now,
    )


def events_in_bulk() -> AbstractContextManager[list[DomainEvent]]:
    """Collect the events recorded inside and insert them with one bulk INSERT at the end
    (in the order they were recorded), their owner events with another. On an exception
    nothing is inserted."""
    return _in_bulk()


@contextmanager
def _in_bulk() -> Iterator[list[DomainEvent]]:
    owner_events: dict[int, tuple[DomainEvent, OwnerEvent]] = {}
    token = _owner_events.set(owner_events)
    try:
        with _events.in_bulk() as collected:
            yield collected
            kept = []
            for line in collected:
                entry = owner_events.get(id(line))
                if entry is not None and entry[0] is line:
                    kept.append(entry[1])
            kept = _worth_telling_all(kept)
    finally:
        _owner_events.reset(token)
    if kept:
        deliveries_create(OwnerEvent.objects.bulk_create(kept))


def record_rival_claim(*, holder: Domain, rival: Project, said: Sentence) -> DomainEvent | None:
    """Tell the holder of a name that `rival` claimed it: at most one line per name and
    rival project per day (UTC), so a rival's add/remove loop cannot bury the owner's other
    lines. The caller holds the rival project's row lock (Add domain takes it), so two adds
    of one rival cannot both find no line."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    told = DomainEvent.objects.filter(
        project_id=holder.project_id,
        hostname=holder.hostname,
        action=Action.RIVAL_CLAIM,
        rival_project_id=rival.pk,
        created_at__gte=today,
    )
    if told.exists():
        return None
    return record_event(domain=holder, action=Action.RIVAL_CLAIM, said=said, rival_project=rival)


def _worth_telling(event_type: EventType, domain: Domain | None) -> bool:
    """Verifying again is news only after a failure the owner was told about; every other
    mapped action always is."""
    if event_type != EventType.DOMAIN_RECOVERED:
        return True
    if domain is None:
        return False
    last = (
        OwnerEvent.objects.filter(domain=domain, type__in=sorted(RECOVERED_FROM | {event_type}))
        .order_by("-occurred_at", "-pk")
        .values_list("type", flat=True)
        .first()
    )
    return last in RECOVERED_FROM


def _worth_telling_all(owner_events: list[OwnerEvent]) -> list[OwnerEvent]:
    """`_worth_telling` for the owner events of a bulk, with one query for all their
    recoveries (a sweep's batch verifies up to a hundred domains at once)."""
    recovering = {
        e.domain_id
        for e in owner_events
        if e.type == EventType.DOMAIN_RECOVERED and e.domain_id is not None
    }
    if not recovering:
        return owner_events
    last_told = (
        OwnerEvent.objects.filter(
            domain=OuterRef("pk"), type__in=sorted(RECOVERED_FROM | {EventType.DOMAIN_RECOVERED})
        )
        .order_by("-occurred_at", "-pk")
        .values("type")[:1]
    )
    after_failure = set(
        Domain.objects.filter(pk__in=recovering)
        .annotate(last_told=Subquery(last_told))
        .filter(last_told__in=sorted(RECOVERED_FROM))
        .values_list("pk", flat=True)
    )
    return [
        e
        for e in owner_events
        if e.type != EventType.DOMAIN_RECOVERED or e.domain_id in after_failure
    ]


def event_types_clean(values: Iterable[str]) -> list[str]:
    """The event types an owner chose (for mail, for a webhook endpoint), sorted, each
    once; a value that is no EventType is refused with unknown_event_type."""
    chosen = sorted(set(values))
    unknown = [value for value in chosen if value not in EventType.values]
    if unknown:
        raise ValidationError(
            _("Unknown event type: %(types)s."),
            code="unknown_event_type",
            params={"types": ", ".join(unknown)},
        )
    return chosen


@functools.cache
def _next_step(type: str, language: str) -> str:
    # The same for every event of a type in a language, so rendered once each.
    with translation.override(language):
        return next_step(type)


def _what(type: EventType, hostname: str, reason: Sentence, message: str) -> Sentence:
    """What happened, in plain words: the Activity line's message where it says so."""
    values: dict[str, Value] = {"hostname": hostname, "message": reason}
    if type == EventType.DOMAIN_ACTIVE:
        return Sentence(
            gettext_noop("%(hostname)s is live over HTTPS with its certificate (%(message)s)."),
            values,
        )
    if type == EventType.DOMAIN_RECOVERED:
        return Sentence(gettext_noop("%(hostname)s verifies again and is served."), values)
    if type == EventType.CERTIFICATE_RENEWAL_FAILED:
        return Sentence(
            gettext_noop("The certificate of %(hostname)s was not renewed. %(message)s"), values
        )
    if message:
        return reason
    return Sentence(gettext_noop("%(type)s: %(hostname)s."), {**values, "type": label(type.label)})


def _page(project: Project, domain: Domain | None) -> str:
    if domain is None:
        return reverse("dashboard:project_domains", kwargs={"slug": project.slug})
    return reverse(
        "dashboard:domain_detail", kwargs={"slug": project.slug, "hostname": domain.hostname}
    )


def _plain(value: Any) -> Any:
    """JSON-ready: datetimes as ISO 8601."""
    return value.isoformat() if hasattr(value, "isoformat") else value
