"""Idempotency-Key for POST (IETF httpapi draft, Stripe's behaviour), for every /v1 resource.

`run()` runs the operation in one transaction and, when it answers, writes the key's
record with that answer as the transaction's last statement: the writes (a pet, a domain)
and the stored answer commit together or not at all, and a keyed POST costs one statement
more than a plain one: no claim committed of its own, no record written twice.

The record's unique (api key, key) decides. Its INSERT overwrites an expired record in the
same statement and returns nothing for a live one; then the operation's writes are rolled
back and the stored answer is replayed (same request) or refused with 422 (a different
one). A request that fails (validation error, refusal, crash) stores nothing, so the
client may retry with the same key; a refusal first looks for a stored answer to replay,
since a retry of a request that succeeded may be refused where the first was not
(the domain is now a duplicate, the check in its cooldown).

A retry sent while the first request still runs its operation runs it too: only one of
the two records can commit, and the other request's writes are rolled back. The later
record INSERT waits on the first's uncommitted row, at most IN_USE_WAIT (the first commits
right after that INSERT), then replays the committed answer, or answers 409 when the first
has still not committed. A process that dies mid-request leaves nothing behind: its
transaction is rolled back by the database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import OperationalError, connection, transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from psycopg import errors
from rest_framework.exceptions import APIException, NotAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from petstore.api.exceptions import BadRequest, IdempotencyKeyInUse, IdempotencyKeyReused
from petstore.apikeys.models import ApiKey, IdempotencyRecord

HEADER = "Idempotency-Key"
TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255
REPLAYED_HEADER = "Idempotent-Replayed"
# How long a record INSERT waits for a concurrent request's uncommitted record with the
# same key (PostgreSQL's lock_timeout, for that statement only): enough for that request's
# COMMIT, which follows its INSERT at once; past it, 409.
IN_USE_WAIT = "50ms"


@dataclass(frozen=True)
class Answer:
    """An operation's answer: the response now, and what a retry with its key replays."""

    status: int
    body: object
    headers: dict[str, str] = field(default_factory=dict)

    def response(self, **headers: str) -> Response:
        return Response(self.body, status=self.status, headers={**self.headers, **headers})


class _KeyTaken(Exception):
    """A live record holds the key: leave the atomic block so its writes roll back."""


def parse_header(raw: str | None) -> str | None:
    """The key, or None when absent. Accepts the draft's sf-string form ("...") too."""
    if raw is None:
        return None
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    # Printable ASCII, " " to "~": no per-character loop on every keyed request.
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not (value.isascii() and value.isprintable()):
        raise BadRequest(f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters.")
    return value


def fingerprint(*, method: str, path: str, body: object) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


def run(request: Request, body: object, operation: Callable[[], Answer]) -> Response:
    """Answer a POST once per Idempotency-Key: `operation()` makes its writes and returns
    its answer (a failure raises), in one transaction with the record of its key."""
    key = parse_header(request.headers.get(HEADER))
    if key is None:
        with transaction.atomic():
            return operation().response()
    if not isinstance(request.auth, ApiKey):  # keys are scoped to the API key
        raise NotAuthenticated()
    api_key = request.auth
    digest = fingerprint(method=request.method or "POST", path=request.path, body=body)
    try:
        with transaction.atomic():
            answer = operation()
            if not store(api_key=api_key, key=key, fingerprint=digest, answer=answer):
                raise _KeyTaken()
    except _KeyTaken:
        replayed = _replay(api_key, key, digest)
        if replayed is None:  # expired and purged since the INSERT saw it
            raise IdempotencyKeyInUse() from None
        return replayed
    except APIException:
        # A refusal of a retry whose first request succeeded: replay that success (and a
        # 409 whose first request has committed since).
        if (replayed := _replay(api_key, key, digest)) is not None:
            return replayed
        raise
    return answer.response()


def store(*, api_key: ApiKey, key: str, fingerprint: str, answer: Answer) -> bool:
    """Write the key's record with its answer, in the caller's transaction, over an expired
    one: False when a live record holds the key. Raises IdempotencyKeyInUse (409) when a
    concurrent request's record is not committed within IN_USE_WAIT. One statement, not an
    ORM upsert compiled per request."""
    now = timezone.now()
    ops = connection.ops
    values: list[Any] = [
        api_key.pk,
        key,
        fingerprint,
        answer.status,
        ops.adapt_json_value(answer.body, None),
        ops.adapt_json_value(answer.headers, None),
        ops.adapt_datetimefield_value(now + TTL),
        ops.adapt_datetimefield_value(now),
    ]
    with connection.cursor() as cursor:
        try:
            cursor.execute(_STORE_NOT_WAITING, [*values, IN_USE_WAIT])
        except OperationalError as error:
            if isinstance(error.__cause__, errors.LockNotAvailable):
                raise IdempotencyKeyInUse() from None
            raise
        return cursor.fetchone() is not None


_TABLE = IdempotencyRecord._meta.db_table
_COLUMNS = (
    "api_key_id, key, fingerprint, response_status, response_body, response_headers,"
    " expires_at, created_at"
)
# Overwrites an expired record; a live one returns no row.
_ON_CONFLICT = (
    " ON CONFLICT (api_key_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,"
    " response_status = excluded.response_status, response_body = excluded.response_body,"
    " response_headers = excluded.response_headers, expires_at = excluded.expires_at,"
    f" created_at = excluded.created_at WHERE {_TABLE}.expires_at <= excluded.created_at"
    " RETURNING id"
)


def record_insert(values: str, source: str = "") -> str:
    """The INSERT of a key's record, its columns (_COLUMNS) from the SQL expressions
    `values`, which may read the rows of `source`: over an expired record, RETURNING its id;
    no row for a live one. Its parameters: those of `values` and `source`, then the wait
    (IN_USE_WAIT).

    The wait on a concurrent uncommitted record is bounded with lock_timeout, set and put
    back inside the statement (a `SET LOCAL` before it and a `SET LOCAL` after it would be
    two round trips). The row comes from a subquery which, first (its WHERE), saves the
    transaction's lock_timeout in a setting of ours, then sets IN_USE_WAIT; RETURNING,
    evaluated once the row is in, puts the saved value back, so the COMMIT's deferred
    foreign key checks wait for their locks as they always did."""
    sources = f"{source}, " if source else ""
    return (
        f"INSERT INTO {_TABLE} ({_COLUMNS}) SELECT {values} FROM {sources}"  # noqa: S608
        "(SELECT set_config('lock_timeout', %s, true) WHERE set_config("
        "'petstore.lock_timeout', current_setting('lock_timeout'), true) IS NOT NULL) AS wait"
        + _ON_CONFLICT
        + ", set_config('lock_timeout', current_setting('petstore.lock_timeout'), true)"
    )


_STORE_NOT_WAITING = record_insert(", ".join(["%s"] * 8))


def _replay(api_key: ApiKey, key: str, fingerprint: str) -> Response | None:
    """The stored answer of a live record, replayed; None when there is none. Raises
    IdempotencyKeyReused (422) for a record of a different request."""
    record = IdempotencyRecord.objects.filter(
        api_key=api_key, key=key, expires_at__gt=timezone.now()
    ).first()
    if record is None:
        return None
    if record.fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    stored = Answer(record.response_status, record.response_body, record.response_headers)
    return stored.response(**{REPLAYED_HEADER: "true"})


def purge_expired(*, now: datetime | None = None) -> int:
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def parameters(*, statuses: list[int]) -> list[OpenApiParameter]:
    """The request header and the replay response header, for an operation's schema."""
    return [
        OpenApiParameter(
            HEADER,
            OpenApiTypes.STR,
            OpenApiParameter.HEADER,
            description=(
                "Makes a retry safe: the same key and body within 24 hours returns the "
                "first response and changes nothing. Keys are scoped to the API key."
            ),
        ),
        OpenApiParameter(
            REPLAYED_HEADER,
            OpenApiTypes.STR,
            OpenApiParameter.HEADER,
            response=statuses,
            description="`true` when this is the stored response of an earlier request.",
        ),
    ]
