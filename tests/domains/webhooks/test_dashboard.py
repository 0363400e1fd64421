"""Settings → Notifications, webhooks: add (the secret shown once), the refusals as form
messages, the delivery log with Redeliver, rotate, delete; another user's endpoint is 404."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from standardwebhooks import Webhook

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import EventType
from domains.models import Delivery, WebhookEndpoint
from domains.services.events import record_owner_event
from domains.services.webhooks import endpoint_create

WEBHOOKS = CHANNELS["webhook"]

pytestmark = pytest.mark.django_db
PAGE = "/dashboard/settings/notifications/"
HOOKS = PAGE + "webhooks/"


@pytest.fixture
def bob_client(bob):
    client = Client()
    client.force_login(bob)
    return client


def beat() -> None:
    for delivery_id in WEBHOOKS.due():
        tasks.deliver("webhook", delivery_id)


def test_adding_an_endpoint_shows_its_secret_once(alice_client, shop, webhook_receiver):
    answer = alice_client.post(
        HOOKS + "add/",
        {"project": shop.pk, "url": webhook_receiver.url, "events": ["domain.failing"]},
        follow=True,
    )
    endpoint = WebhookEndpoint.objects.get()
    [(secret_page, status)] = answer.redirect_chain
    assert (secret_page, status) == (f"{HOOKS}{endpoint.pk}/secret/", 302)
    assert endpoint.secret in answer.content.decode()
    assert f'data-copy="{endpoint.secret}"' in answer.content.decode()  # a Copy button
    # A reload shows the page again, without the secret, and adds nothing.
    again = alice_client.get(secret_page).content.decode()
    assert endpoint.secret not in again and "shown once" in again
    assert WebhookEndpoint.objects.count() == 1
    listing = alice_client.get(PAGE).content.decode()
    assert webhook_receiver.url in listing
    assert endpoint.secret not in listing
    assert endpoint.secret not in alice_client.get(f"{HOOKS}{endpoint.pk}/").content.decode()


@pytest.mark.parametrize(
    "url", ["https://10.0.0.1/", "https://192.168.1.1/", "https://169.254.169.254/"]
)
def test_a_private_address_is_refused_with_a_message_on_the_form(
    alice_client, shop, dns_server, url
):
    answer = alice_client.post(
        HOOKS + "add/", {"project": shop.pk, "url": url, "events": ["domain.failing"]}
    )
    assert answer.status_code == 400
    assert "not a public address" in answer.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_another_users_project_cannot_be_chosen(bob_client, bob, shop, webhook_receiver):
    answer = bob_client.post(
        HOOKS + "add/",
        {"project": shop.pk, "url": webhook_receiver.url, "events": ["domain.failing"]},
    )
    assert answer.status_code == 400
    assert not WebhookEndpoint.objects.exists()


def test_the_delivery_log_shows_status_duration_and_first_bytes_and_redelivers(
    alice_client, shop, www, webhook_receiver
):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    webhook_receiver.status = 502
    webhook_receiver.answer = b"bad gateway <b>here</b>"
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    beat()
    page = alice_client.get(f"{HOOKS}{made.endpoint.pk}/").content.decode()
    assert "domain.failing www.example.test" in page
    assert "502" in page and " ms" in page
    assert "bad gateway &lt;b&gt;here&lt;/b&gt;" in page  # escaped
    logged = Delivery.objects.get(channel="webhook")
    webhook_receiver.status = 200
    answer = alice_client.post(f"{HOOKS}{made.endpoint.pk}/deliveries/{logged.pk}/redeliver/")
    assert answer.status_code == 302
    beat()  # what the queued task (or the beat) does
    logged.refresh_from_db()
    assert (
        logged.attempt_log.latest("attempted_at", "pk").status_code,
        logged.state,
        logged.attempts,
    ) == (200, "delivered", 2)
    # Every attempt is kept and shown, not only the last one.
    assert [a.status_code for a in logged.attempt_log.all()] == [502, 200]
    page = alice_client.get(f"{HOOKS}{made.endpoint.pk}/").content.decode()
    assert "attempt 1" in page and "attempt 2" in page
    assert "bad gateway &lt;b&gt;here&lt;/b&gt;" in page  # the first answer is still there


def test_the_endpoint_forms_projects_are_named_as_the_headings_name_them(alice_client, shop):
    shop.name = "Alice's shop"
    shop.save(update_fields=["name"])
    page = alice_client.get(PAGE).content.decode()
    assert re.search(rf'<option value="{shop.pk}"[^>]*>Alice&#x27;s shop</option>', page)
    assert "<h3>Alice&#x27;s shop</h3>" in page


def test_a_delivered_delivery_reads_delivered(alice_client, shop, www, webhook_receiver):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    beat()
    page = alice_client.get(f"{HOOKS}{made.endpoint.pk}/").content.decode()
    assert '<span class="small">Delivered</span>' in page
    assert "2xx" not in page and "mailed" not in page


def test_redeliver_needs_the_csrf_token(alice, shop, www, webhook_receiver):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    beat()
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    logged = Delivery.objects.get(channel="webhook")
    answer = client.post(f"{HOOKS}{made.endpoint.pk}/deliveries/{logged.pk}/redeliver/")
    assert answer.status_code == 403


def test_rotate_shows_a_new_secret_that_signs_from_then_on(
    alice_client, shop, www, webhook_receiver
):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    answer = alice_client.post(f"{HOOKS}{made.endpoint.pk}/rotate/", follow=True)
    made.endpoint.refresh_from_db()
    new = made.endpoint.secret
    assert new != made.secret and new in answer.content.decode()
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    beat()
    [received] = webhook_receiver.requests
    assert Webhook(new).verify(received.body, received.headers)["type"] == "domain.failing"


def test_delete_asks_first_then_removes_the_endpoint(alice_client, shop, webhook_receiver):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    asked = alice_client.get(f"{HOOKS}{made.endpoint.pk}/delete/")
    assert asked.status_code == 200 and "Delete the webhook endpoint" in asked.content.decode()
    assert WebhookEndpoint.objects.exists()
    assert alice_client.post(f"{HOOKS}{made.endpoint.pk}/delete/").status_code == 302
    assert not WebhookEndpoint.objects.exists()


def test_the_same_url_twice_is_refused_on_the_form(alice_client, shop, webhook_receiver):
    endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    answer = alice_client.post(
        HOOKS + "add/",
        {"project": shop.pk, "url": webhook_receiver.url, "events": ["domain.active"]},
    )
    assert answer.status_code == 400
    assert "already receives this project" in answer.content.decode()
    assert WebhookEndpoint.objects.count() == 1


def test_another_user_gets_404_on_every_webhook_page(bob_client, bob, shop, www, webhook_receiver):
    made = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.failing"])
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    beat()
    logged = Delivery.objects.get(channel="webhook")
    base = f"{HOOKS}{made.endpoint.pk}/"
    assert bob_client.get(base).status_code == 404
    assert bob_client.post(base + "rotate/").status_code == 404
    assert bob_client.post(base + "delete/").status_code == 404
    assert bob_client.post(f"{base}deliveries/{logged.pk}/redeliver/").status_code == 404
    assert WebhookEndpoint.objects.get().secret == made.secret
