"""Idempotency-Key on createPet: replay, 422 on a different body, one pet however many
concurrent retries, 409 while the first has not committed its record; and what it costs."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from pets.api import createpath, views
from pets.models import Category, Pet
from pets.services import pet_create
from petstore import tasks
from petstore.api import idempotency
from petstore.apikeys.models import IdempotencyRecord
from tests.pets.helpers import assert_error, bearer, post_json


def create(client, body, key="order-42", **extra):
    return post_json(client, "/v1/pets", body, HTTP_IDEMPOTENCY_KEY=key, **extra)


def test_a_retry_with_the_same_key_and_body_replays_the_first_response(api, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    first = create(api, body)
    again = create(api, body)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert Pet.objects.count() == 1


def test_the_same_body_with_members_in_another_order_is_the_same_request(api, dogs):
    create(api, {"name": "Rex", "categoryId": dogs.id, "status": "sold"})
    again = create(api, {"status": "sold", "categoryId": dogs.id, "name": "Rex"})
    assert again.status_code == 201
    assert Pet.objects.count() == 1


def test_the_same_key_with_a_different_body_is_a_422(api, dogs):
    create(api, {"name": "Rex", "categoryId": dogs.id})
    response = create(api, {"name": "Max", "categoryId": dogs.id})
    assert_error(response, 422, "idempotency_key_reused")
    assert list(Pet.objects.values_list("name", flat=True)) == ["Rex"]


def test_keys_are_scoped_to_the_api_key(api, bob_key, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    bob = APIClient()
    bob.credentials(**bearer(bob_key.plaintext))
    first, other = create(api, body), create(bob, body)
    assert first.status_code == other.status_code == 201
    assert first.json()["id"] != other.json()["id"]
    assert "Idempotent-Replayed" not in other
    assert Pet.objects.count() == 2


def test_a_failed_request_stores_nothing_so_a_corrected_retry_works(api, dogs):
    assert_error(create(api, {"name": "", "categoryId": dogs.id}), 400, "validation_error")
    assert not IdempotencyRecord.objects.exists()
    assert create(api, {"name": "Rex", "categoryId": dogs.id}).status_code == 201


@pytest.mark.parametrize("fast", [False, True], ids=["drf", "fast path"])
def test_a_crash_stores_nothing_and_the_key_can_be_used_again(api, dogs, monkeypatch, fast):
    body = {"name": "Rex", "categoryId": dogs.id}
    monkeypatch.setattr(settings, "API_LIST_FAST_PATH", fast)
    with monkeypatch.context() as patched:
        # A bug in the create's service on DRF's path, in its statement on the fast path.
        patched.setattr(*((createpath, "_insert_keyed") if fast else (views, "pet_create")), crash)
        assert_error(create(api, body), 500, "internal_error")
    assert not IdempotencyRecord.objects.exists()
    assert not Pet.objects.exists()
    assert create(api, body).status_code == 201


def crash(*args, **kwargs):
    raise ZeroDivisionError


def test_keys_are_kept_24_hours_then_the_key_is_new_again(api, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        first = create(api, body)
    with time_machine.travel(start + timedelta(hours=23, minutes=59), tick=False):
        assert create(api, body).json() == first.json()
    with time_machine.travel(start + timedelta(hours=24, seconds=1), tick=False):
        later = create(api, body)
    assert later.status_code == 201
    assert "Idempotent-Replayed" not in later
    assert Pet.objects.count() == 2
    # The expired record was overwritten with the new answer, in the same statement.
    assert IdempotencyRecord.objects.get().response_body == later.json()


def test_the_purge_task_deletes_expired_keys_only(api, dogs):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        create(api, {"name": "Old", "categoryId": dogs.id}, key="old")
    with time_machine.travel(start + timedelta(hours=12), tick=False):
        create(api, {"name": "New", "categoryId": dogs.id}, key="new")
    with time_machine.travel(start + timedelta(hours=25), tick=False):
        assert tasks.purge_expired_idempotency_keys() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


def test_the_purge_runs_on_the_beat_schedule():
    entry = settings.CELERY_BEAT_SCHEDULE["pets-purge-idempotency-keys"]
    assert entry["task"] == "pets.tasks.purge_expired_idempotency_keys"
    assert entry["task"] == tasks.purge_expired_idempotency_keys.name
    schedule = entry["schedule"]
    assert isinstance(schedule, float) and schedule <= 3600


def test_the_drafts_quoted_form_of_the_header_is_the_same_key(api, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    create(api, body, key="abc")
    assert create(api, body, key='"abc"')["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there"])
def test_an_invalid_idempotency_key_is_a_400(api, dogs, key):
    body = assert_error(
        create(api, {"name": "Rex", "categoryId": dogs.id}, key=key), 400, "bad_request"
    )
    assert "Idempotency-Key" in body["message"]
    assert not Pet.objects.exists()


def test_without_the_header_every_post_creates(api, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    post_json(api, "/v1/pets", body)
    post_json(api, "/v1/pets", body)
    assert Pet.objects.count() == 2


def race(plaintext: str, bodies: list[dict]) -> list:
    """Each body POSTed at once from its own thread, all with Idempotency-Key "race";
    the responses in the order of the bodies."""
    barrier = threading.Barrier(len(bodies))
    responses: list = [None] * len(bodies)

    def worker(i):
        try:
            client = APIClient()
            client.credentials(**bearer(plaintext))
            barrier.wait(timeout=10)
            responses[i] = create(client, bodies[i], key="race")
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return responses


@pytest.fixture(params=[True, False], ids=["fast path", "drf"])
def both_paths(request, monkeypatch):
    """The test runs on createPet's fast path (pets.api.createpath) and on DRF's POST."""
    monkeypatch.setattr(settings, "API_LIST_FAST_PATH", request.param)
    return request.param


@pytest.fixture
def drf_path(monkeypatch):
    """DRF's POST, whose service (`views.pet_create`) the test holds or breaks."""
    monkeypatch.setattr(settings, "API_LIST_FAST_PATH", False)


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_create_exactly_one_pet(alice_key, dogs, both_paths):
    body = {"name": "Rex", "categoryId": dogs.id}
    responses = race(alice_key.plaintext, [body] * 8)
    results = [(r.status_code, r.json()) for r in responses]

    assert Pet.objects.count() == 1
    pet_id = Pet.objects.get().id
    statuses = [status for status, _ in results]
    assert set(statuses) <= {201, 409}, results
    assert 201 in statuses
    assert all(b["id"] == pet_id for s, b in results if s == 201)
    assert all(b["code"] == "idempotency_key_in_use" for s, b in results if s == 409)
    assert IdempotencyRecord.objects.get().response_status == 201
    # One 201 created the pet; any other is the answer of one rolled back, replayed.
    replayed = [r for r in responses if r.get("Idempotent-Replayed") == "true"]
    assert len(replayed) == statuses.count(201) - 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_and_different_bodies_create_one_pet(
    alice_key, dogs, both_paths
):
    bodies = [{"name": f"Pet {i}", "categoryId": dogs.id} for i in range(6)]
    results = [r.status_code for r in race(alice_key.plaintext, bodies)]

    assert Pet.objects.count() == 1
    assert results.count(201) == 1
    assert set(results) <= {201, 409, 422}


def client_of(issued) -> APIClient:
    client = APIClient()
    client.credentials(**bearer(issued.plaintext))
    return client


@pytest.fixture
def held_first_create(monkeypatch, drf_path):
    """pets.api.views.pet_create, the first call of which waits, inside its request's
    transaction, until the test sets `release`; `entered` is set when it starts waiting."""
    entered, release = threading.Event(), threading.Event()
    calls = itertools.count()

    def create_held(**fields):
        if next(calls) == 0:
            entered.set()
            assert release.wait(timeout=10)
        return pet_create(**fields)

    monkeypatch.setattr(views, "pet_create", create_held)
    return entered, release


@pytest.mark.django_db(transaction=True)
def test_a_retry_while_the_first_runs_creates_nothing_more(alice_key, dogs, held_first_create):
    """The retry runs too and commits first; the first's writes are rolled back at its
    record, and it answers with the retry's pet (replayed)."""
    entered, release = held_first_create
    body = {"name": "Rex", "categoryId": dogs.id}
    first: list = []

    def send_first():
        try:
            first.append(create(client_of(alice_key), body))
        finally:
            connection.close()

    thread = threading.Thread(target=send_first)
    thread.start()
    assert entered.wait(timeout=10)
    retry = create(client_of(alice_key), body)
    release.set()
    thread.join(timeout=10)

    assert retry.status_code == first[0].status_code == 201
    assert first[0].json() == retry.json()
    assert first[0]["Idempotent-Replayed"] == "true"
    assert list(Pet.objects.values_list("id", flat=True)) == [retry.json()["id"]]


@pytest.mark.django_db(transaction=True)
def test_a_retry_while_the_first_has_not_committed_its_record_is_a_409(alice_key, dogs, both_paths):
    body = {"name": "Rex", "categoryId": dogs.id}
    written, release = threading.Event(), threading.Event()

    def first_request_before_its_commit():
        # What the first request does last: its record, then COMMIT, held back here.
        try:
            with transaction.atomic():
                assert idempotency.store(
                    api_key=alice_key.api_key,
                    key="order-42",
                    fingerprint=idempotency.fingerprint(method="POST", path="/v1/pets", body=body),
                    answer=idempotency.Answer(201, {"id": 1}),
                )
                written.set()
                assert release.wait(timeout=10)
        finally:
            connection.close()

    thread = threading.Thread(target=first_request_before_its_commit)
    thread.start()
    try:
        assert written.wait(timeout=10)
        started = time.monotonic()
        assert_error(create(client_of(alice_key), body), 409, "idempotency_key_in_use")
        assert time.monotonic() - started < 5  # a short wait on its row, not until release
        assert not Pet.objects.exists()  # the retry's pet was rolled back with it
    finally:
        release.set()
        thread.join(timeout=10)
    assert create(client_of(alice_key), body)["Idempotent-Replayed"] == "true"


def statements_of(client, body, **headers) -> list[tuple[str, bool]]:
    """Each statement of one POST, and whether it ran inside a transaction."""
    seen: list[tuple[str, bool]] = []

    def spy(execute, sql, params, many, context):
        seen.append((sql, connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        assert post_json(client, "/v1/pets", body, **headers).status_code == 201
    return seen


@pytest.mark.django_db(transaction=True)
def test_a_key_costs_one_statement_more_in_the_same_transaction(alice_key, dogs, drf_path):
    body = {"name": "Rex", "categoryId": dogs.id}
    client = client_of(alice_key)
    create(client, body, key="warm-up")  # the API key's lookup is cached from here on
    plain = statements_of(client, body)
    keyed = statements_of(client, body, HTTP_IDEMPOTENCY_KEY="order-42")

    assert len(keyed) == len(plain) + 1
    assert keyed[:-1] == plain
    sql, in_transaction = keyed[-1]
    assert sql.startswith(f"INSERT INTO {IdempotencyRecord._meta.db_table} ")
    # The pet and its record in one atomic block: one transaction, one COMMIT.
    assert [t for s, t in keyed if s.startswith("INSERT")] == [True, True]


@pytest.mark.django_db(transaction=True)
def test_on_the_fast_path_a_create_keyed_or_not_is_one_statement_of_its_own(alice_key, dogs):
    """No BEGIN, no COMMIT, no SELECT of the category: one statement, its own transaction,
    which writes the pet (and the key's record) or nothing."""
    body = {"name": "Rex", "categoryId": dogs.id}
    client = client_of(alice_key)
    create(client, body, key="warm-up")
    plain = statements_of(client, body)
    keyed = statements_of(client, body, HTTP_IDEMPOTENCY_KEY="order-42")

    assert [(sql.split()[:3], atomic) for sql, atomic in plain] == [
        (["INSERT", "INTO", Pet._meta.db_table], False)
    ]
    ((sql, atomic),) = keyed
    assert sql.startswith("WITH new AS (") and not atomic
    assert f"INSERT INTO {IdempotencyRecord._meta.db_table} " in sql
    record = IdempotencyRecord.objects.get(key="order-42")
    pet = Pet.objects.latest("id")
    assert record.response_body == {"id": pet.id, "name": "Rex", "categoryId": dogs.id,
                                     "status": "available"}  # fmt: skip
    assert record.response_headers == {"Location": f"http://testserver/v1/pets/{pet.id}"}


@pytest.mark.django_db(transaction=True)
def test_the_short_wait_is_for_the_record_only_not_the_commit(alice_key, dogs, both_paths):
    """The commit's deferred foreign key checks wait for a lock as long as they must: here
    the pet's category, locked by another transaction until the commit has waited on it
    for longer than IN_USE_WAIT."""
    locked, seen_waiting = threading.Event(), threading.Event()

    def lock_the_category():
        try:
            with transaction.atomic():
                Category.objects.select_for_update().get(pk=dogs.pk)
                locked.set()
                deadline = time.monotonic() + 10
                while not seen_waiting.is_set() and time.monotonic() < deadline:
                    with connection.cursor() as cursor:
                        cursor.execute(
                            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            " AND datname = current_database()"
                        )
                        if cursor.fetchone():
                            seen_waiting.set()
                    time.sleep(0.01)
                time.sleep(0.3)  # six times IN_USE_WAIT
        finally:
            connection.close()

    thread = threading.Thread(target=lock_the_category)
    thread.start()
    try:
        assert locked.wait(timeout=10)
        response = create(client_of(alice_key), {"name": "Rex", "categoryId": dogs.id})
    finally:
        thread.join(timeout=15)
    assert seen_waiting.is_set()
    assert response.status_code == 201, response.content
