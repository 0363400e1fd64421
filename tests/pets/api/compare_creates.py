"""Playing the same creates down both paths of createPet and comparing what comes back and
what is stored: the fast path (pets.api.createpath) against DRF's POST.

Each side runs in a savepoint of the test's transaction that is rolled back afterwards,
with the pets' id sequence restarted at the same value, at the same frozen instant and from
a clean rate-limit state, so both sides create the same ids and store the same rows.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

import time_machine
from django.db import connection, transaction
from rest_framework.test import APIClient

from pets.models import Pet
from petstore.apikeys.models import IdempotencyRecord
from tests.pets.api.compare import ADDRESS, NO_HEADER, PER_REQUEST, answered_by_drf, wsgi_get
from tests.pets.helpers import bearer, clear_rate_limits

FIRST_ID = 5000  # the id both sides' first create gets
JSON = "application/json"


def post(body: str | bytes, **extra) -> tuple[str | bytes, dict]:
    """A create as played: its raw body and its headers (`content_type` among them)."""
    return body, {"content_type": JSON, **extra}


def play_creates(settings, key, requests: list[tuple], *, fast: bool) -> tuple[list, list]:
    """Status, headers and body of each POST /v1/pets, played in order with `key` unless a
    request names its own HTTP_AUTHORIZATION (NO_HEADER: none sent); then the pets and
    the Idempotency-Key records stored."""
    settings.API_LIST_FAST_PATH = fast
    named = [extra.get("HTTP_AUTHORIZATION") or "" for _, extra in requests]
    prefixes = [value.split("_")[1] for value in named if value.startswith("Bearer pst_")]
    clear_rate_limits(key.api_key.prefix, *prefixes, ADDRESS)
    client = APIClient(REMOTE_ADDR=ADDRESS)
    answers = []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('pets_pet', 'id'), %s, false)", [FIRST_ID]
            )
        with time_machine.travel(datetime(2027, 3, 1, 12, 0, tzinfo=UTC), tick=False):
            for body, extra in requests:
                headers = {**bearer(key.plaintext), **extra}
                headers = {name: value for name, value in headers.items() if value is not NO_HEADER}
                response = client.generic("POST", "/v1/pets", body, **headers)
                kept = {k: v for k, v in response.headers.items() if k not in PER_REQUEST}
                answers.append((response.status_code, kept, response.content, response))
        stored = [
            list(Pet.objects.order_by("id").values_list("id", "name", "category_id", "status")),
            list(
                IdempotencyRecord.objects.order_by("id").values_list(
                    "key",
                    "fingerprint",
                    "response_status",
                    "response_body",
                    "response_headers",
                    "expires_at",
                )
            ),  # fmt: skip
        ]
        transaction.set_rollback(True)
    return answers, stored


def assert_same_creates(settings, key, requests, *, fast: list[bool] | None = None) -> list:
    """Both paths give the same answers and store the same rows. `fast`: for each request,
    whether the fast path must have answered it itself (None: not checked)."""
    (mine, mine_stored) = play_creates(settings, key, requests, fast=True)
    (drf, drf_stored) = play_creates(settings, key, requests, fast=False)
    for request, a, b in zip(requests, mine, drf, strict=True):
        assert a[:3] == b[:3], request
        assert answered_by_drf(b[3]), request
    assert mine_stored == drf_stored
    if fast is not None:
        assert [not answered_by_drf(answer[3]) for answer in mine] == fast
    return mine


def wsgi_post(body: bytes, headers: dict[str, str]) -> tuple[str, list, bytes]:
    """POST /v1/pets through petstore.wsgi's application (made anew, as compare.wsgi_get
    does), in a savepoint rolled back afterwards, the ids restarted at FIRST_ID."""
    environ = {
        "REQUEST_METHOD": "POST",
        "CONTENT_TYPE": JSON,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        **headers,
    }
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('pets_pet', 'id'), %s, false)", [FIRST_ID]
            )
        answer = wsgi_get("", environ)
        transaction.set_rollback(True)
    return answer
