"""Idempotency-Key for POST (IETF httpapi draft, Stripe's behaviour), for every /v1 resource.

1. `claim()` inserts (api key, Idempotency-Key) in one autocommitted statement
   (`INSERT ... ON CONFLICT DO NOTHING RETURNING`, one round trip): the unique
   constraint lets exactly one concurrent request win, and the others see its
   claim at once.
2. The winner runs the operation and calls `complete()` in the *same*
   transaction as its writes, conditionally on its claim token: the writes (a pet, a
   domain) and the stored response commit together or not at all.
3. A retry with the same key and body replays the stored response; a different
   body is 422; a claim not completed yet is 409.

A request that fails (validation error, crash) `release()`s its claim, so the
client may retry with the same key. A claim abandoned by a dead process can be
taken over after LOCK_TIMEOUT; if its owner was merely slow, its `complete()`
then updates nothing and its transaction is rolled back.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from petstore.api.exceptions import BadRequest, IdempotencyKeyInUse, IdempotencyKeyReused
from petstore.apikeys.models import ApiKey, IdempotencyRecord

HEADER = "Idempotency-Key"
TTL = timedelta(hours=24)
LOCK_TIMEOUT = timedelta(seconds=60)
MAX_KEY_LENGTH = 255
REPLAYED_HEADER = "Idempotent-Replayed"


@dataclass(frozen=True)
class Claim:
    record_id: int
    token: str


@dataclass(frozen=True)
class Replay:
    status: int
    body: object
    headers: dict


def parse_header(raw: str | None) -> str | None:
    """The key, or None when absent. Accepts the draft's sf-string form ("...") too."""
    if raw is None:
        return None
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all(" " <= c <= "~" for c in value):
        raise BadRequest(f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters.")
    return value


def fingerprint(*, method: str, path: str, body: object) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


def claim(*, api_key: ApiKey, key: str, fingerprint: str) -> Claim | Replay:
    """Claim the key for this request, or return the response to replay.

    Raises IdempotencyKeyReused (422) or IdempotencyKeyInUse (409).
    """
    for _ in range(3):
        now = timezone.now()
        token = secrets.token_hex(16)
        record_id = _insert_claim(api_key, key, fingerprint, token, now)
        if record_id is not None:
            return Claim(record_id=record_id, token=token)
        existing = IdempotencyRecord.objects.filter(api_key=api_key, key=key).first()
        if existing is None:
            continue  # released in between: try to claim again
        if existing.expires_at <= now:
            IdempotencyRecord.objects.filter(pk=existing.pk, expires_at__lte=now).delete()
            continue
        if existing.fingerprint != fingerprint:
            raise IdempotencyKeyReused()
        if (status := existing.response_status) is not None:  # completed: replay it
            return Replay(status, existing.response_body, existing.response_headers)
        if existing.locked_at <= now - LOCK_TIMEOUT and _take_over(existing, token, now):
            return Claim(record_id=existing.pk, token=token)
        raise IdempotencyKeyInUse()
    raise IdempotencyKeyInUse()


# The claim in one statement: no transaction of its own (BEGIN and COMMIT are a round trip
# each) and no IntegrityError to recover from (inside an outer transaction, as under tests,
# an error would need a savepoint: two more). Both PostgreSQL and SQLite (3.35+) run it.
_CLAIM_SQL = (
    f"INSERT INTO {IdempotencyRecord._meta.db_table}"  # noqa: S608 - the model's own name
    " (api_key_id, key, fingerprint, claim_token, locked_at, expires_at, response_headers,"
    " created_at) VALUES (%s, %s, %s, %s, %s, %s, '{}', %s)"
    " ON CONFLICT (api_key_id, key) DO NOTHING RETURNING id"
)


def _insert_claim(
    api_key: ApiKey, key: str, fingerprint: str, token: str, now: datetime
) -> int | None:
    """The new record's id, or None when the key is already claimed."""
    at = connection.ops.adapt_datetimefield_value(now)
    expires = connection.ops.adapt_datetimefield_value(now + TTL)
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL, [api_key.pk, key, fingerprint, token, at, expires, at])
        row = cursor.fetchone()
    return None if row is None else row[0]


def _take_over(record: IdempotencyRecord, token: str, now: datetime) -> bool:
    return bool(
        IdempotencyRecord.objects.filter(
            pk=record.pk, claim_token=record.claim_token, response_status__isnull=True
        ).update(claim_token=token, locked_at=now)
    )


def complete(claim: Claim, *, status: int, body: object, headers: dict) -> None:
    """Store the response; call inside the transaction that made the writes."""
    adapt = connection.ops.adapt_json_value
    with connection.cursor() as cursor:  # one statement, not an ORM update compiled each time
        cursor.execute(
            _COMPLETE_SQL,
            [status, adapt(body, None), adapt(headers, None), claim.record_id, claim.token],
        )
        updated = cursor.rowcount
    if not updated:
        raise IdempotencyKeyInUse()  # our claim was taken over: roll back our writes


_COMPLETE_SQL = (
    f"UPDATE {IdempotencyRecord._meta.db_table}"  # noqa: S608 - the model's own name
    " SET response_status = %s, response_body = %s, response_headers = %s"
    " WHERE id = %s AND claim_token = %s AND response_status IS NULL"
)


def release(claim: Claim) -> None:
    IdempotencyRecord.objects.filter(
        pk=claim.record_id, claim_token=claim.token, response_status__isnull=True
    ).delete()


def purge_expired(*, now: datetime | None = None) -> int:
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def run(request: Request, body: object, operation: Callable[[Claim | None], Response]) -> Response:
    """Answer a POST once per Idempotency-Key: replay a stored response, or run
    `operation(claim)`, which must `complete(claim, ...)` inside the transaction of its
    writes when the claim is not None. A failure releases the claim (only a stored success
    is replayed), so the client may retry with the same key."""
    key = parse_header(request.headers.get(HEADER))
    if key is None:
        return operation(None)
    if not isinstance(request.auth, ApiKey):  # keys are scoped to the API key
        raise NotAuthenticated()
    outcome = claim(
        api_key=request.auth,
        key=key,
        fingerprint=fingerprint(method=request.method or "POST", path=request.path, body=body),
    )
    if isinstance(outcome, Replay):
        headers = {**outcome.headers, REPLAYED_HEADER: "true"}
        return Response(outcome.body, status=outcome.status, headers=headers)
    try:
        return operation(outcome)
    except Exception:
        release(outcome)
        raise


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
