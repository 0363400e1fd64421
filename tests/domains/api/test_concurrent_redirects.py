"""Many `POST /v1/projects/{slug}/redirects` for one source at once: one redirect is made,
every other request is refused with 409 or replays the first answer; none answers 500."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from domains.models import Redirect
from domains.services.custom_domains import domain_add
from tests.domains.api.helpers import SHOP, post
from tests.fixtures.domains import go_live, run_at_once
from tests.pets.helpers import bearer

pytestmark = pytest.mark.django_db(transaction=True)

TIMES = 16


@pytest.fixture
def ends(shop, alice):
    return [
        go_live(domain_add(project=shop, hostname=f"{label}.example.test", actor=alice))
        for label in ("old", "www")
    ]


def create(alice_key, key: str | None):
    def send():
        client = APIClient()
        client.credentials(**bearer(alice_key.plaintext))
        extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
        body = {"from": "old.example.test", "to": "www.example.test"}
        response = post(client, f"{SHOP}/redirects", body, **extra)
        return response.status_code, response.json()

    return send


def test_concurrent_creates_for_one_source_answer_201_once_and_409_otherwise(ends, alice_key):
    answers, errors = run_at_once(create(alice_key, None), TIMES)
    assert errors == []
    statuses = sorted(status for status, _ in answers)
    assert statuses == [201] + [409] * (TIMES - 1)
    assert {body["code"] for status, body in answers if status == 409} == {"duplicate_from"}
    assert Redirect.objects.count() == 1


def test_concurrent_creates_under_one_key_answer_the_first_answer_or_409(ends, alice_key):
    answers, errors = run_at_once(create(alice_key, "one-redirect"), TIMES)
    assert errors == []
    assert {status for status, _ in answers} <= {201, 409}
    made = [body for status, body in answers if status == 201]
    assert made and all(body == made[0] for body in made)  # the first answer, or its replay
    conflicts = {body["code"] for status, body in answers if status == 409}
    assert conflicts <= {"duplicate_from", "idempotency_key_in_use"}
    assert Redirect.objects.count() == 1
