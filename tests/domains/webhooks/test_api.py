"""The webhook endpoints of the domains API: add (the secret in this answer only), list,
get, delete, the delivery log; another user's key gets 404; the guard's refusals are 400s
with their code; Idempotency-Key replays the POST (and its secret) without a second row."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import EventType
from domains.models import WebhookEndpoint
from domains.services.events import record_owner_event
from domains.services.projects import project_create
from tests.domains.api.helpers import SHOP, post
from tests.pets.helpers import assert_error, bearer

WEBHOOKS = CHANNELS["webhook"]

pytestmark = pytest.mark.django_db
HOOKS = f"{SHOP}/webhooks"


@pytest.fixture
def bob_api(bob_key):
    client = APIClient()
    client.credentials(**bearer(bob_key.plaintext))
    return client


@pytest.fixture
def made(api, shop, webhook_receiver):
    answer = post(api, HOOKS, {"url": webhook_receiver.url, "events": ["domain.failing"]})
    assert answer.status_code == 201, answer.json()
    return answer


def test_post_answers_the_secret_once(api, made, webhook_receiver):
    body = made.json()
    assert body["secret"].startswith("whsec_")
    assert body["url"] == webhook_receiver.url
    assert body["events"] == ["domain.failing"]
    assert made["Location"].endswith(f"{HOOKS}/{body['id']}")
    assert "secret" not in api.get(f"{HOOKS}/{body['id']}").json()
    [listed] = api.get(HOOKS).json()
    assert listed["id"] == body["id"] and "secret" not in listed


def test_idempotency_key_replays_the_post_without_a_second_endpoint(api, shop, webhook_receiver):
    body = {"url": webhook_receiver.url, "events": ["domain.failing"]}
    first = post(api, HOOKS, body, HTTP_IDEMPOTENCY_KEY="hook-1")
    again = post(api, HOOKS, body, HTTP_IDEMPOTENCY_KEY="hook-1")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert WebhookEndpoint.objects.count() == 1


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://10.0.0.1/hooks", "webhook_address"),
        ("https://192.168.4.4/", "webhook_address"),
        ("https://169.254.169.254/latest/meta-data/", "webhook_address"),
        ("ftp://example.com/", "webhook_scheme"),
        ("not a url", "webhook_url"),
    ],
)
def test_a_private_address_is_a_400_with_its_code(api, shop, dns_server, settings, url, code):
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    answer = post(api, HOOKS, {"url": url, "events": ["domain.failing"]})
    assert_error(answer, 400, code)
    assert not WebhookEndpoint.objects.exists()


def test_the_same_url_twice_is_a_409_duplicate(api, made, webhook_receiver):
    answer = post(api, HOOKS, {"url": webhook_receiver.url, "events": ["domain.active"]})
    assert_error(answer, 409, "duplicate")
    assert WebhookEndpoint.objects.count() == 1


def test_an_unknown_event_is_a_400(api, shop, webhook_receiver):
    answer = post(api, HOOKS, {"url": webhook_receiver.url, "events": ["domain.exploded"]})
    assert answer.status_code == 400


def test_the_delivery_log_pages_with_status_and_first_bytes(api, made, shop, www, webhook_receiver):
    webhook_receiver.status = 500
    webhook_receiver.answer = b"nope"
    for _ in range(3):
        record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    for delivery_id in WEBHOOKS.due():
        tasks.deliver("webhook", delivery_id)
    url = f"{HOOKS}/{made.json()['id']}/deliveries"
    first = api.get(url, {"limit": 2})
    assert first.status_code == 200
    assert len(first.json()) == 2
    assert 'rel="next"' in first["Link"]
    entry = first.json()[0]
    assert (entry["event_type"], entry["status_code"], entry["response"]) == (
        "domain.failing",
        500,
        "nope",
    )
    assert entry["state"] == "pending" and entry["attempts"] == 1
    assert entry["event_id"].startswith("evt_")
    [attempt] = entry["attempt_log"]
    assert (attempt["ok"], attempt["status_code"], attempt["response"]) == (False, 500, "nope")
    assert attempt["attempted_at"] == entry["attempted_at"]


def test_every_time_of_the_delivery_log_is_written_alike_in_utc(
    api, made, shop, www, webhook_receiver
):
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    for delivery_id in WEBHOOKS.due():
        tasks.deliver("webhook", delivery_id)
    [entry] = api.get(f"{HOOKS}/{made.json()['id']}/deliveries").json()
    assert entry["state"] == "delivered"
    times = {
        key: value
        for key, value in [*entry.items(), *entry["attempt_log"][0].items()]
        if key.endswith("_at") and value is not None
    }
    assert {"created_at", "attempted_at", "delivered_at"} <= set(times)
    assert all(value.endswith("Z") for value in times.values()), times


def test_delete_removes_the_endpoint(api, made):
    path = f"{HOOKS}/{made.json()['id']}"
    assert api.delete(path).status_code == 204
    assert_error(api.get(path), 404, "not_found")


def test_another_users_key_gets_404_on_every_webhook_url(bob_api, bob, made, webhook_receiver):
    project_create(slug="bobs", owner=bob, plan="pro", name="Bob's")
    hook = f"{HOOKS}/{made.json()['id']}"
    answers = [
        bob_api.get(HOOKS),
        post(bob_api, HOOKS, {"url": webhook_receiver.url, "events": ["domain.failing"]}),
        bob_api.get(hook),
        bob_api.delete(hook),
        bob_api.get(f"{hook}/deliveries"),
    ]
    for answer in answers:
        assert_error(answer, 404, "not_found")
    assert WebhookEndpoint.objects.count() == 1


def test_bobs_own_project_cannot_reach_alices_endpoint(bob_api, bob, made):
    project_create(slug="bobs", owner=bob, plan="pro", name="Bob's")
    assert_error(bob_api.get(f"/v1/projects/bobs/webhooks/{made.json()['id']}"), 404, "not_found")
