"""The raw WSGI floor: listPets and createPet as a plain WSGI callable, served as production
serves the app (petstore/webserver.py's granian, its settings), with no Django on the request.

What it keeps of our answer: the hot path's SQL (bench/statements.py) and createPet's fast
statement (one INSERT from an existing category), the same JSON written with orjson, the same
status, headers (a fresh `X-Request-Id` each, the security headers, `Allow`) and bytes, the
signed `next` link. What it leaves out, as the FastAPI peer does (bench/peer.py): the list
authenticates nothing, the create compares the bearer key with BENCH_TOKEN in constant time;
no rate limits, no idempotency keys, no Error shape (a bad request is a bare 400). So its ratio
to the peer is the ceiling of any WSGI path under granian on this machine: a fast path of ours
at the WSGI level does at least this much per request.

    python -m bench.rawwsgi

serves it on PORT with WEB_CONCURRENCY workers, as `python -m petstore.webserver` serves
`petstore.wsgi:served` (bench/wsgifloor.py starts it). RAW_PREPARE=1 lets psycopg prepare
each statement once per connection (its default threshold); otherwise, as Django's cursors,
the parameters are bound client-side.
"""

from __future__ import annotations

import hmac
import multiprocessing
import os
import threading
import uuid
from datetime import UTC, datetime

import django
import orjson
import psycopg
from django.conf import settings

from bench.peer import decode_cursor, encode_cursor
from bench.statements import SELECT
from petstore import webserver

_ORDER = " ORDER BY 1 ASC LIMIT %s"
_STATEMENTS = {  # (status given, cursor given): the hot path's statement
    (False, False): SELECT + _ORDER,
    (True, False): SELECT + ' WHERE "pets_pet"."status" = %s' + _ORDER,
    (False, True): SELECT + ' WHERE "pets_pet"."id" > %s' + _ORDER,
    (True, True): SELECT + ' WHERE ("pets_pet"."status" = %s AND "pets_pet"."id" > %s)' + _ORDER,
}
_INSERT = (
    "INSERT INTO pets_pet (name, category_id, status, created_at, updated_at)"
    " SELECT %s, id, %s, %s, %s FROM pets_category WHERE id = %s RETURNING id"
)
_STATUSES = frozenset({"available", "pending", "sold"})
_TOKEN = os.environ.get("BENCH_TOKEN", "").encode()
_PREPARE = os.environ.get("RAW_PREPARE") == "1"
_HEADERS = [  # what our list and create answer besides their own, in the same order
    ("Allow", "GET, POST, HEAD, OPTIONS"),
    ("X-Frame-Options", "DENY"),
]
_TRAILING = [
    ("Content-Language", "en"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
]
_local = threading.local()


def _connection() -> psycopg.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        url = os.environ["DATABASE_URL"]
        conn = _local.conn = psycopg.connect(
            url,
            autocommit=True,
            prepare_threshold=5 if _PREPARE else None,
            cursor_factory=None if _PREPARE else psycopg.ClientCursor,
        )
    return conn


def _answer(start_response, status: str, body: bytes, own: list[tuple[str, str]]):
    headers = [
        ("Content-Type", "application/json"),
        *own,
        *_HEADERS,
        ("Content-Length", str(len(body))),
        *_TRAILING,
        ("X-Request-Id", uuid.uuid4().hex),
    ]
    start_response(status, headers)
    return [body]


def _list(environ, start_response):
    params = dict(part.split("=", 1) for part in environ.get("QUERY_STRING", "").split("&") if part)
    limit = int(params.get("limit", 20))
    status = params.get("status")
    cursor = params.get("cursor")
    args: list[object] = [p for p in (status,) if p]
    if cursor is not None:
        args.append(decode_cursor(cursor))
    args.append(limit + 1)
    rows = _connection().execute(_STATEMENTS[(bool(status), cursor is not None)], args).fetchall()
    page = rows[:limit]
    body = orjson.dumps(
        [{"id": r[0], "name": r[1], "categoryId": r[2], "status": r[3]} for r in page]
    )
    own = []
    if len(rows) > limit:
        query = f"status={status}&" if status else ""
        url = f"http://{environ['HTTP_HOST']}{environ['PATH_INFO']}"
        link = f'<{url}?{query}limit={limit}&cursor={encode_cursor(page[-1][0])}>; rel="next"'
        own.append(("Link", link))
    return _answer(start_response, "200 OK", body, own)


def _create(environ, start_response):
    scheme, _, token = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.encode(), _TOKEN):
        return _answer(start_response, "401 Unauthorized", b"{}", [])
    body = orjson.loads(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))
    name, category_id = body.get("name"), body.get("categoryId")
    status = body.get("status", "available")
    if type(name) is not str or type(category_id) is not int or status not in _STATUSES:
        return _answer(start_response, "400 Bad Request", b"{}", [])
    name = name.strip()
    now = datetime.now(UTC)
    row = _connection().execute(_INSERT, (name, status, now, now, category_id)).fetchone()
    if row is None:
        return _answer(start_response, "400 Bad Request", b"{}", [])
    pk = row[0]
    pet = {"id": pk, "name": name, "categoryId": category_id, "status": status}
    location = f"http://{environ['HTTP_HOST']}/v1/pets/{pk}"
    return _answer(start_response, "201 Created", orjson.dumps(pet), [("Location", location)])


def application(environ, start_response):
    if environ.get("PATH_INFO") == "/v1/pets":
        if environ["REQUEST_METHOD"] == "GET":
            return _list(environ, start_response)
        if environ["REQUEST_METHOD"] == "POST":
            return _create(environ, start_response)
    if environ.get("PATH_INFO") == "/healthz":
        return _answer(start_response, "200 OK", b"{}", [])
    return _answer(start_response, "404 Not Found", b"{}", [])


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    django.setup()
    multiprocessing.set_start_method("spawn")
    config = webserver.WebServerConfig.from_settings()
    webserver.build(config, settings.LOGGING, application="bench.rawwsgi:application").serve()


if __name__ == "__main__":
    main()
