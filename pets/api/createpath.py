"""createPet's fast path: `POST /v1/pets` answered in one statement, with DRF's bytes.

PetsView's POST through DRF validates with NewPetSerializer (a query for the category),
creates the pet with the ORM and, with an `Idempotency-Key`, writes the key's record, all in
one transaction: BEGIN, the category's SELECT, the pet's INSERT, the record's INSERT and
COMMIT, five round trips to the database beside DRF's per-request machinery
(docs/decisions/performance.md, "Writes"). This module answers a create that is valid as
sent, with the same status, headers and bytes, in one statement that is its own
transaction:

- the platform's checks on Django's request (petstore.api.direct), as the list's hot path;
- the body parsed by the API's own JSON parser, and the three fields checked as
  NewPetSerializer checks them (`_new_pet`: the same rules and limits, from the same
  declarations);
- the category's existence, the pet's INSERT and, with a key, the key's record, in one
  statement (`_PLAIN`, `_KEYED`): the pet is inserted only from an existing category, and
  with a key only when its record is (the id taken first from the table's sequence, so
  the record can store the answer holding it); a committed create is durable when
  answered, as through DRF (synchronous_commit is never turned off);
- the 201 written at once as DRF writes it: PetSerializer's four keys and the absolute
  `Location` of the new pet.

Anything else goes to DRF, so every refusal and every other answer is DRF's own:
`serve` returns None before the checks when the request is not one it can answer (no
credentials, an `Accept` to negotiate, another content type, no body or one over
DATA_UPLOAD_MAX_MEMORY_SIZE, a view or serializer other than the ones written here); after
the checks, a body that is not valid as sent, an unknown category, an invalid key, a key
whose record is live (a replay, or 422) or held by a request still running (409) go to the
view's own POST handler through DRF (petstore.api.direct.drf_handler), which runs as if
DRF had dispatched them. The statement writes nothing in those cases, so DRF's handler
starts from the same state.

tests/pets/api/test_createpath.py plays creates through both paths and compares status,
headers, body bytes and what is stored; API_LIST_FAST_PATH=0 leaves every POST to DRF.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
from typing import Any

import psycopg
from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone
from psycopg import errors
from rest_framework import serializers
from rest_framework.generics import GenericAPIView

from pets.api.serializers import (
    CONTROL_CHARACTERS,
    CategoryIdField,
    NewPetSerializer,
    PetSerializer,
    StrictCharField,
    StrictChoiceField,
    has_format_character,
)
from pets.models import NAME_MAX_LENGTH, Category, Pet, PetStatus
from petstore.api import direct, idempotency
from petstore.api.ids import INT64_MAX
from petstore.api.parsers import JSONParser

logger = logging.getLogger(__name__)

_PARSER = JSONParser()
_KEY_HEADER = "HTTP_" + idempotency.HEADER.upper().replace("-", "_")
_STATUSES = frozenset(PetStatus.values)
_DEFAULT_STATUS = str(PetStatus.AVAILABLE.value)  # NewPetSerializer's default, as written
# NewPetSerializer's fields as `_new_pet` checks them: name, class, source, required,
# default, allow_null, and the rules of each (a CharField's length, trimming and blank, a
# ChoiceField's choices). Any other field set leaves every POST to DRF.
_NEW_PET = (
    ("name", StrictCharField, "name", True, None, False, (1, NAME_MAX_LENGTH, True, False)),
    ("categoryId", CategoryIdField, "category", True, None, False, ()),
    (
        "status",
        StrictChoiceField,
        "status",
        False,
        PetStatus.AVAILABLE,
        False,
        tuple(dict(PetStatus.choices).items()),
    ),  # fmt: skip
)
# PetSerializer's fields, as pets.api.hotpath writes them from a row (its `_FIELDS`).
_PET_KEYS = ("id", "name", "categoryId", "status")

_PET = Pet._meta.db_table
_CATEGORY = Category._meta.db_table
_PET_COLUMNS = "name, category_id, status, created_at, updated_at"
# A pet from an existing category: no row when there is none.
_PLAIN = (
    f"INSERT INTO {_PET} ({_PET_COLUMNS}) SELECT %s, id, %s, %s, %s"  # noqa: S608
    f" FROM {_CATEGORY} WHERE id = %s RETURNING id"
)
# The id first (from an existing category), then the key's record holding the answer with
# that id, then the pet, inserted only from the record's row: a live record inserts neither.
# Its columns, as idempotency.store writes them: api key, key, fingerprint, status, the body
# (the id before PetSerializer's other keys, which are a parameter), the headers (Location),
# expiry, creation.
_KEYED = (
    f"WITH new AS (SELECT nextval(pg_get_serial_sequence('{_PET}', 'id')) AS id"  # noqa: S608
    f" FROM {_CATEGORY} WHERE id = %s),"
    " record AS ("
    + idempotency.record_insert(
        "%s, %s, %s, %s, jsonb_build_object('id', new.id) || %s::jsonb,"
        " jsonb_build_object('Location', %s::text || new.id), %s, %s",
        source="new",
    )
    + f"), pet AS (INSERT INTO {_PET} (id, {_PET_COLUMNS})"  # noqa: S608
    " SELECT new.id, %s, %s, %s, %s, %s FROM new, record RETURNING id)"
    " SELECT new.id, EXISTS (SELECT FROM pet) FROM new"
)


@functools.cache
def _answers_for(view_class: type[GenericAPIView]) -> bool:
    """Whether the view runs what this module runs in its place: the platform's checks and
    renderer, the API's JSON parser alone, NewPetSerializer's fields as `_NEW_PET` and
    PetSerializer's as `_PET_KEYS`. Asked once per view class; a difference is logged."""
    differences = direct.differences(view_class) + [
        name
        for name, same in (
            ("parsers", view_class.parser_classes == [JSONParser]),
            ("input serializer", _checks_as(NewPetSerializer)),
            ("output serializer", tuple(PetSerializer().fields) == _PET_KEYS),
        )
        if not same
    ]
    if differences:
        logger.warning(
            "createPet's fast path declines %s (DRF answers its POSTs): its %s differ from "
            "what pets.api.createpath was written for",
            view_class.__qualname__,
            ", ".join(differences),
        )
    return not differences


def _checks_as(serializer_class: type[serializers.Serializer]) -> bool:
    """Whether the serializer validates as `_new_pet` does: DRF's own validation over the
    fields of `_NEW_PET`, in that order."""
    if serializer_class.validate is not serializers.Serializer.validate:
        return False
    if serializer_class.to_internal_value is not serializers.Serializer.to_internal_value:
        return False
    fields = []
    for name, field in serializer_class().fields.items():
        rules: tuple = ()
        if isinstance(field, serializers.CharField):
            rules = (field.min_length, field.max_length, field.trim_whitespace, field.allow_blank)
        elif isinstance(field, serializers.ChoiceField):
            rules = tuple(field.choices.items())
        default = None if field.default is serializers.empty else field.default
        fields.append(
            (name, type(field), field.source, field.required, default, field.allow_null, rules)
        )
    return tuple(fields) == _NEW_PET


def serve(view: GenericAPIView, request: HttpRequest) -> HttpResponseBase | None:
    """The view's answer to this POST, or None when DRF's dispatch must answer it."""
    meta = request.META
    length = meta.get("CONTENT_LENGTH", "")
    if (
        not _answers_for(type(view))
        or not direct.plain_accept(request)
        or meta.get("CONTENT_TYPE") != _PARSER.media_type
        or not length.isdigit()
        or not 0 < int(length) <= (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or INT64_MAX)
    ):
        return None
    return direct.answer(view, request, lambda user_auth: _create(view, request, user_auth))


def _create(
    view: GenericAPIView, request: HttpRequest, user_auth: direct.UserAuth
) -> HttpResponseBase:
    body = _body(request)
    new = _new_pet(body) if body is not None else None
    key = _key(request.META.get(_KEY_HEADER))
    handler = view.post  # type: ignore[attr-defined]
    if new is None or key == "":
        return direct.drf_handler(view, request, user_auth, handler)
    name, category_id, status = new
    location = _location(request)
    now = timezone.now()
    try:
        with _own_transaction():
            if key is None:
                pk = _insert(name, category_id, status, now)
            else:
                digest = idempotency.fingerprint(method="POST", path=request.path, body=body)
                pk = _insert_keyed(
                    user_auth[1], key, digest, location, (name, category_id, status), now
                )
    except OperationalError as error:
        if not isinstance(error.__cause__, errors.LockNotAvailable):
            raise
        pk = None  # a request still running holds the key: DRF's handler waits, or 409
    if pk is None:  # no such category, or the key is not free: DRF's handler says what
        return direct.drf_handler(view, request, user_auth, handler)
    pet = {"id": pk, "name": name, "categoryId": category_id, "status": status}
    response = HttpResponse(
        direct.RENDERER.render(pet), content_type=direct.RENDERER.media_type, status=201
    )
    response["Location"] = location + str(pk)
    return response


def _body(request: HttpRequest) -> Any:
    """The body as the API's parser reads it; None when it refuses it."""
    try:
        return _PARSER.parse(io.BytesIO(request.body))
    except Exception:  # noqa: BLE001 - DRF's handler reads it again and answers the error
        return None


def _new_pet(body: Any) -> tuple[str, int, str] | None:
    """NewPetSerializer's validated name, category id and status when the body is valid as
    sent (but for the category's existence, which the statement checks); None otherwise.

    The name: a string (StrictCharField) without control or format characters, which an
    ASCII string that `isprintable()` cannot hold, trimmed (CharField), then 1 to
    NAME_MAX_LENGTH characters. The category id: an integer that is no bool, within int64
    (CategoryIdField). The status: one of PetStatus's values when given (StrictChoiceField),
    `available` when absent."""
    if type(body) is not dict:
        return None
    name, category_id = body.get("name"), body.get("categoryId")
    status = body.get("status", _DEFAULT_STATUS)
    if type(name) is not str or type(category_id) is not int or type(status) is not str:
        return None
    if not (name.isascii() and name.isprintable()) and (
        CONTROL_CHARACTERS.search(name) or has_format_character(name) or not _encodes(name)
    ):
        return None
    name = name.strip()
    if not 1 <= len(name) <= NAME_MAX_LENGTH or not 1 <= category_id <= INT64_MAX:
        return None
    return (name, category_id, status) if status in _STATUSES else None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _key(raw: str | None) -> str | None:
    """The Idempotency-Key, None when absent, "" when invalid (DRF's handler refuses it)."""
    try:
        return idempotency.parse_header(raw)
    except idempotency.BadRequest:
        return ""


def _location(request: HttpRequest) -> str:
    """The new pet's absolute URL without its id, as BaseAPIView.created builds it (the id
    is the route's last segment, written as it is)."""
    return request.build_absolute_uri(_detail_path(get_script_prefix(), get_urlconf()))[:-1]


@functools.lru_cache(maxsize=16)
def _detail_path(script_prefix: str, urlconf: str | None) -> str:
    """getPet's path for the id 0 under this script prefix and URL conf (what `reverse`
    reads besides its arguments): `reverse` walks the URL patterns each time, about a tenth
    of a create's CPU in the profile."""
    return reverse("pet-detail", kwargs={"petId": 0}, urlconf=urlconf)


def _own_transaction() -> Any:
    """Nothing outside a transaction: the statement is its own, committed when it returns.
    Inside one (a test's, ATOMIC_REQUESTS), a savepoint, so that a statement refused by the
    database leaves the enclosing transaction usable for DRF's handler, as DRF's path does."""
    return transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext()


def _insert(name: str, category_id: int, status: str, now: Any) -> int | None:
    stamp = connection.ops.adapt_datetimefield_value(now)
    row = _run_prepared(_PLAIN, [name, status, stamp, stamp, category_id])
    return row[0] if row else None


def _run_prepared(sql: str, params: list[Any]) -> Any:
    """The statement's one row (or None), its parameters bound by the server, so that psycopg
    prepares it once it has run the connection's `prepare_threshold` times (settings'
    DATABASES): PostgreSQL then neither parses nor plans it again. Django's cursors bind on the
    client, which no statement can prepare; every other query of the platform stays so
    (docs/decisions/performance.md, "Writes"). Django's own connection, health check, error
    mapping and cursor wrapper (its execute wrappers, DEBUG's query log) as for any query."""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        # Typed Any: django-stubs has make_cursor take a CursorWrapper, Django a DB-API cursor.
        bound: Any = psycopg.Cursor(connection.connection)
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(bound) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _insert_keyed(
    api_key: Any, key: str, digest: str, location: str, new: tuple[str, int, str], now: Any
) -> int | None:
    """The pet's id when the pet and the key's record were written; None when the category
    is unknown or a live record holds the key (then nothing was written). Raises
    OperationalError (LockNotAvailable) when a record not yet committed holds it past
    IN_USE_WAIT."""
    name, category_id, status = new
    ops = connection.ops
    stamp = ops.adapt_datetimefield_value(now)
    rest = ops.adapt_json_value({"name": name, "categoryId": category_id, "status": status}, None)
    params = [
        category_id,
        *(api_key.pk, key, digest, 201, rest, location),
        ops.adapt_datetimefield_value(now + idempotency.TTL),
        stamp,
        idempotency.IN_USE_WAIT,
        *(name, category_id, status, stamp, stamp),
    ]
    row = _run_prepared(_KEYED, params)
    return row[0] if row and row[1] else None
