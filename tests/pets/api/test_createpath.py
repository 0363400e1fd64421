"""createPet's fast path (pets.api.createpath) answers exactly what DRF's POST answers.

Each scenario is played twice on the same data, once with API_LIST_FAST_PATH on and once
off (tests/pets/api/compare_creates.py): status, headers (but the per-request id and date)
and body bytes must be identical, and so must the pets and Idempotency-Key records stored.
The creates the fast path is meant to answer must have been answered by it; every refusal
is DRF's own, whichever path took the request.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest
import time_machine
from django.db import connection
from rest_framework.test import APIClient

from pets.models import Category
from petstore.apikeys.scopes import Scope
from petstore.apikeys.services import api_key_issue, api_key_revoke
from tests.pets.api.compare import NO_HEADER
from tests.pets.api.compare_creates import assert_same_creates, post, wsgi_post
from tests.pets.helpers import bearer, post_json
from tests.processes import ROOT, service_env

pytestmark = pytest.mark.django_db


def pet(category: Category, **fields) -> str:
    return json.dumps({"name": "Rex", "categoryId": category.id, **fields})


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"status": "sold"},
        {"status": "pending", "name": "Zoë"},
        {"name": "Rex 🐕"},
        {"name": "  Rex \u3000"},  # trimmed
        {"name": "x" * 100},
        {"name": "a\u00a0b"},
        {"name": "P3 ✓ \u2028"},  # a character the renderer escapes
        {"id": 999, "x": [1, {"y": None}]},  # unknown members are ignored, the id too
    ],
)
def test_a_valid_create_is_answered_alike_by_the_fast_path(
    settings, alice_key, dogs, no_rate_limits, fields
):
    (answer,) = assert_same_creates(settings, alice_key, [post(pet(dogs, **fields))], fast=[True])
    assert answer[0] == 201
    assert answer[1]["Location"] == f"http://testserver/v1/pets/{json.loads(answer[2])['id']}"


@pytest.mark.parametrize(
    "fields",
    [
        {"name": 5}, {"name": True}, {"name": None}, {"name": ""}, {"name": "   "},
        {"name": "x" * 101}, {"name": "Re\x00x"}, {"name": "Rex\n"}, {"name": "Rex\x85"},
        {"name": "Rex\u202egpj.exe"}, {"name": "\ufeffRex"}, {"name": ["Rex"]},
        {"categoryId": True}, {"categoryId": "1"}, {"categoryId": 1.0}, {"categoryId": 0},
        {"categoryId": -1}, {"categoryId": 2**63}, {"categoryId": 424242}, {"categoryId": None},
        {"status": "adopted"}, {"status": ""}, {"status": "SOLD"}, {"status": 1},
        {"status": None}, {"name": "", "categoryId": "x", "status": 2},
    ],
)  # fmt: skip
def test_each_invalid_field_gets_drfs_400(settings, alice_key, dogs, no_rate_limits, fields):
    (answer,) = assert_same_creates(settings, alice_key, [post(pet(dogs, **fields))])
    assert answer[0] == 400


@pytest.mark.parametrize(
    ("body", "extra", "status"),
    [
        ("{}", {}, 400),  # both fields named
        ("[]", {}, 400),
        ('"Rex"', {}, 400),
        ("null", {}, 400),
        ("", {}, 400),  # no body
        ('{"name": "Rex",', {}, 400),
        ('{"name": NaN, "categoryId": 1}', {}, 400),
        ('{"name": "\\ud800", "categoryId": 1}', {}, 400),  # a lone surrogate
        (b"\xff", {}, 400),
        ("name=Rex", {"content_type": "application/x-www-form-urlencoded"}, 415),
        ("<pet/>", {"content_type": "application/xml"}, 415),
        ("{}", {"content_type": "application/json; charset=utf-8"}, 400),
        ("{}", {"HTTP_ACCEPT": "text/html"}, 406),
    ],
)
def test_a_body_that_is_not_a_pet_gets_drfs_answer(
    settings, alice_key, dogs, no_rate_limits, body, extra, status
):
    (answer,) = assert_same_creates(settings, alice_key, [post(body, **extra)])
    assert answer[0] == status


def test_a_body_over_the_size_limit_gets_drfs_413(settings, alice_key, dogs, no_rate_limits):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    requests = [post(pet(dogs, name="x" * 2000)), post(pet(dogs))]
    answers = assert_same_creates(settings, alice_key, requests, fast=[False, True])
    assert [answer[0] for answer in answers] == [413, 201]


def test_a_create_in_utf8_with_its_charset_named_is_drfs(settings, alice_key, dogs, no_rate_limits):
    requests = [post(pet(dogs), content_type="application/json; charset=utf-8")]
    (answer,) = assert_same_creates(settings, alice_key, requests, fast=[False])
    assert answer[0] == 201


@pytest.mark.parametrize(
    "authorization",
    [NO_HEADER, "", "Bearer", "Bearer pst_0000", "Bearer pst_00000000_wrong", "Basic eDp4"],
)
def test_missing_or_refused_credentials_get_drfs_401(settings, alice_key, dogs, authorization):
    extra = {"HTTP_AUTHORIZATION": authorization}
    (answer,) = assert_same_creates(settings, alice_key, [post(pet(dogs), **extra)])
    assert answer[0] == 401


def test_a_revoked_key_gets_drfs_401(settings, alice, dogs):
    key = api_key_issue(user=alice)
    api_key_revoke(api_key=key.api_key)
    (answer,) = assert_same_creates(settings, key, [post(pet(dogs))])
    assert answer[0] == 401


def test_a_key_without_the_write_scope_gets_drfs_403(settings, alice, dogs, no_rate_limits):
    reader = api_key_issue(user=alice, scopes=[Scope.PETS_READ])
    (answer,) = assert_same_creates(settings, reader, [post(pet(dogs))])
    assert answer[0] == 403
    assert "WWW-Authenticate" in answer[1]


def test_the_key_rate_limit_answers_the_same_429(settings, alice_key, dogs):
    settings.API_RATE_LIMIT = "2/min"
    settings.API_ADDRESS_RATE_LIMIT = ""
    answers = assert_same_creates(settings, alice_key, [post(pet(dogs))] * 3)
    assert [answer[0] for answer in answers] == [201, 201, 429]
    assert answers[2][1]["Retry-After"]


def test_the_address_rate_limit_answers_the_same_429(settings, alice_key, bob_key, dogs):
    settings.API_RATE_LIMIT = ""
    settings.API_ADDRESS_RATE_LIMIT = "2/min"
    bob = bearer(bob_key.plaintext)
    requests = [post(pet(dogs)), post(pet(dogs), **bob)] * 2
    answers = assert_same_creates(settings, alice_key, requests)
    assert [answer[0] for answer in answers] == [201, 201, 429, 429]


# --- Idempotency-Key --------------------------------------------------------------------


def keyed(body: str, key: str = "order-42", **extra) -> tuple:
    return post(body, HTTP_IDEMPOTENCY_KEY=key, **extra)


def test_a_keyed_create_and_its_replay_are_answered_and_stored_alike(
    settings, alice_key, dogs, no_rate_limits
):
    requests = [keyed(pet(dogs)), keyed(pet(dogs)), keyed(pet(dogs), key='"order-42"')]
    answers = assert_same_creates(settings, alice_key, requests, fast=[True, False, False])
    assert [answer[0] for answer in answers] == [201, 201, 201]
    assert answers[1][1]["Idempotent-Replayed"] == "true"
    assert answers[1][2] == answers[2][2]


def test_a_key_reused_with_another_body_gets_drfs_422(settings, alice_key, dogs, no_rate_limits):
    requests = [keyed(pet(dogs)), keyed(pet(dogs, name="Max"))]
    answers = assert_same_creates(settings, alice_key, requests, fast=[True, False])
    assert [answer[0] for answer in answers] == [201, 422]


def test_keys_are_scoped_to_the_api_key_on_both_paths(
    settings, alice_key, bob_key, dogs, no_rate_limits
):
    requests = [keyed(pet(dogs)), keyed(pet(dogs), **bearer(bob_key.plaintext))]
    answers = assert_same_creates(settings, alice_key, requests, fast=[True, True])
    assert [answer[0] for answer in answers] == [201, 201]


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there"])
def test_an_invalid_idempotency_key_gets_drfs_400(settings, alice_key, dogs, no_rate_limits, key):
    (answer,) = assert_same_creates(settings, alice_key, [keyed(pet(dogs), key=key)])
    assert answer[0] == 400


def test_a_keyed_create_of_an_unknown_category_stores_no_record(
    settings, alice_key, dogs, no_rate_limits
):
    requests = [keyed(pet(dogs, categoryId=424242)), keyed(pet(dogs))]
    answers = assert_same_creates(settings, alice_key, requests, fast=[False, True])
    assert [answer[0] for answer in answers] == [400, 201]


# --- The statement, prepared ----------------------------------------------------------------


def prepared_inserts() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall() if "INSERT INTO pets_pet" in row[0]]


def test_the_create_statements_are_prepared_once_they_ran_a_few_times(
    settings, alice_key, dogs, no_rate_limits
):
    """PostgreSQL parses and plans each of createPet's statements once per connection, not
    once per create: after as many creates as the connection's threshold, both the plain
    and the keyed one are prepared on it."""
    settings.API_LIST_FAST_PATH = True
    client = APIClient(**bearer(alice_key.plaintext))
    for n in range(settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"] + 1):
        assert (
            post_json(client, "/v1/pets", {"name": f"Rex {n}", "categoryId": dogs.id}).status_code
            == 201
        )
        keyed = post_json(
            client,
            "/v1/pets",
            {"name": f"Max {n}", "categoryId": dogs.id},
            HTTP_IDEMPOTENCY_KEY=f"prepared-{n}",
        )
        assert keyed.status_code == 201

    statements = prepared_inserts()
    assert any(statement.startswith("INSERT INTO pets_pet") for statement in statements)
    assert any(statement.startswith("WITH new AS") for statement in statements)


@pytest.mark.parametrize(("flag", "prepared"), [("", True), ("0", False)], ids=["on", "off"])
def test_db_prepared_statements_sets_each_connections_threshold(settings, flag, prepared):
    """Behind a pooler that drops prepared statements an operator turns them off: the
    process's psycopg connection then never prepares."""
    code = (
        "import django; django.setup(); from django.db import connection; "
        "connection.ensure_connection(); print(connection.connection.prepare_threshold)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=service_env(settings, DB_PREPARED_STATEMENTS=flag),
        capture_output=True,
        text=True,
        timeout=60,
    )
    threshold = str(settings.PREPARE_THRESHOLD) if prepared else "None"
    assert result.stdout.strip().splitlines()[-1] == threshold, result.stderr


# --- Through the WSGI application: the lean handler (petstore.http.lean) -----------------


@pytest.mark.parametrize(
    ("fields", "headers", "status"),
    [
        ({}, {}, 201),
        ({"status": "sold"}, {"HTTP_IDEMPOTENCY_KEY": "order-42"}, 201),
        ({"name": ""}, {}, 400),
        ({"categoryId": 424242}, {"HTTP_IDEMPOTENCY_KEY": "order-42"}, 400),
        ({}, {"HTTP_AUTHORIZATION": "Bearer pst_00000000_wrong"}, 401),
        ({}, {"HTTP_ACCEPT": "text/html"}, 406),
        # From the trusted edge over HTTPS: HSTS, and https in the Location.
        ({}, {"HTTP_X_FORWARDED_PROTO": "https", "REMOTE_ADDR": "127.0.0.1"}, 201),
    ],
)
def test_the_lean_handler_creates_byte_for_byte_as_the_full_handler(
    settings, alice_key, dogs, no_rate_limits, test_transaction_kept, fields, headers, status
):
    served = []
    for fast in (True, False):
        settings.API_LIST_FAST_PATH = fast
        sent = {"HTTP_AUTHORIZATION": f"Bearer {alice_key.plaintext}", **headers}
        with time_machine.travel(datetime(2027, 3, 1, 12, 0, tzinfo=UTC), tick=False):
            served.append(wsgi_post(pet(dogs, **fields).encode(), sent))
    assert served[0] == served[1]
    assert int(served[0][0].split()[0]) == status
