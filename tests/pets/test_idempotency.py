"""Idempotency-Key on createPet: replay, 422 on a different body, 409 while running."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.db import connection
from django.utils import timezone
from rest_framework.exceptions import APIException
from rest_framework.test import APIClient

from pets import tasks
from pets.models import Pet
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


def test_a_key_whose_first_request_is_still_running_is_a_409(api, alice_key, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    # The first request has claimed the key and not finished yet.
    idempotency.claim(
        api_key=alice_key.api_key,
        key="order-42",
        fingerprint=idempotency.fingerprint(method="POST", path="/v1/pets", body=body),
    )
    assert_error(create(api, body), 409, "idempotency_key_in_use")
    assert not Pet.objects.exists()


def test_a_claim_abandoned_by_a_dead_request_is_taken_over_after_a_minute(api, alice_key, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    fingerprint = idempotency.fingerprint(method="POST", path="/v1/pets", body=body)
    abandoned = idempotency.claim(api_key=alice_key.api_key, key="k", fingerprint=fingerprint)
    assert isinstance(abandoned, idempotency.Claim)  # a new key: claimed, nothing to replay
    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=False):
        assert create(api, body, key="k").status_code == 201
    # The slow original can no longer complete: its writes would be rolled back.
    with pytest.raises(APIException) as exc_info:
        idempotency.complete(abandoned, status=201, body={}, headers={})
    assert exc_info.value.status_code == 409
    assert Pet.objects.count() == 1


def test_keys_are_scoped_to_the_api_key(api, bob_key, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    bob = APIClient()
    bob.credentials(**bearer(bob_key.plaintext))
    first, other = create(api, body), create(bob, body)
    assert first.status_code == other.status_code == 201
    assert first.json()["id"] != other.json()["id"]
    assert "Idempotent-Replayed" not in other
    assert Pet.objects.count() == 2


def test_a_failed_request_releases_its_key_so_a_corrected_retry_works(api, dogs):
    assert_error(create(api, {"name": "", "categoryId": dogs.id}), 400, "validation_error")
    assert not IdempotencyRecord.objects.exists()
    assert create(api, {"name": "Rex", "categoryId": dogs.id}).status_code == 201


def test_a_crash_releases_the_key_and_creates_nothing(api, dogs, monkeypatch):
    from pets.api import views

    monkeypatch.setattr(views, "pet_create", lambda **kw: 1 / 0)
    assert_error(create(api, {"name": "Rex", "categoryId": dogs.id}), 500, "internal_error")
    assert not IdempotencyRecord.objects.exists()
    assert not Pet.objects.exists()


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


@pytest.mark.needs_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_create_exactly_one_pet(alice_key, dogs):
    body = {"name": "Rex", "categoryId": dogs.id}
    results = [(r.status_code, r.json()) for r in race(alice_key.plaintext, [body] * 8)]

    assert Pet.objects.count() == 1
    pet_id = Pet.objects.get().id
    statuses = [status for status, _ in results]
    assert set(statuses) <= {201, 409}, results
    assert 201 in statuses
    assert all(b["id"] == pet_id for s, b in results if s == 201)
    assert all(b["code"] == "idempotency_key_in_use" for s, b in results if s == 409)
    assert IdempotencyRecord.objects.get().response_status == 201


@pytest.mark.needs_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_and_different_bodies_create_one_pet(alice_key, dogs):
    bodies = [{"name": f"Pet {i}", "categoryId": dogs.id} for i in range(6)]
    results = [r.status_code for r in race(alice_key.plaintext, bodies)]

    assert Pet.objects.count() == 1
    assert results.count(201) == 1
    assert set(results) <= {201, 409, 422}
