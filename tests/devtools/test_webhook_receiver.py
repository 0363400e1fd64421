"""`make run`'s webhook receiver: the platform's own delivery (the address guard, the
signature, one HTTP POST) to http://127.0.0.1:<port>/dev/webhooks/<name>/ is kept with its
headers, and the page says whether its signature verifies with the secret pasted there
(standardwebhooks' verifier, as a receiver runs it)."""

from __future__ import annotations

import json
import re
import time
import uuid

import pytest
from pytest_django.live_server_helper import LiveServer

from devtools import webhookreceiver
from domains.dashboard.forms import webhook_url_help
from domains.webhooks import address, client, signing
from tests.fixtures.domains import LOOPBACK


@pytest.fixture
def receiver_url(dev_pages, plain_http, settings):
    """The receiver's URL on a web server of this test's own, started on the settings above
    (its middleware reads them as it starts), as the endpoint form takes it under DEBUG."""
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    settings.OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
    server = LiveServer("127.0.0.1")
    try:
        port = server.url.rsplit(":", 1)[1]
        yield f"http://127.0.0.1:{port}/dev/webhooks/demo/"
    finally:
        server.stop()


def deliver(url: str, secret: str, payload: dict[str, object]) -> client.Answer:
    """One delivery as the webhook worker makes it."""
    body = json.dumps(payload).encode()
    headers = signing.headers(
        secret=secret, message_id=f"msg_{uuid.uuid4().hex}", timestamp=int(time.time()), body=body
    )
    return client.post(address.check_url(url), body=body, headers=headers, excerpt=200)


def paste(alice_client, secret: str) -> None:
    answer = alice_client.post("/dev/webhooks/demo/secret/", {"secret": secret})
    assert answer.status_code == 302


def test_a_delivery_signed_with_the_pasted_secret_verifies(receiver_url, alice_client):
    secret = signing.new_secret()
    paste(alice_client, secret)
    answer = deliver(receiver_url, secret, {"type": "domain.active", "hostname": "shop.test"})
    assert answer.ok, answer
    [delivery] = webhookreceiver.deliveries("demo")
    assert delivery.signature == webhookreceiver.VERIFIED
    assert delivery.headers["Webhook-Signature"].startswith("v1,")
    assert delivery.headers["User-Agent"] == "Petstore-Webhooks/1"
    page = alice_client.get("/dev/webhooks/demo/").content.decode()
    assert ">verified<" in page
    assert "webhook-signature" in page.lower()
    assert "shop.test" in page


def test_the_web_process_s_environment_is_no_header_of_the_delivery(
    dev_pages, alice_client, monkeypatch
):
    """`make run` sets HTTP_PORT in the web process's environment, which a WSGI server
    hands on in each request's: it is no header the worker sent."""
    monkeypatch.setenv("HTTP_PORT", "8731")
    body = b"{}"
    headers = signing.headers(secret=signing.new_secret(), message_id="m", timestamp=1, body=body)
    alice_client.post(
        "/dev/webhooks/demo/", body, content_type="application/json",
        headers=headers, HTTP_PORT="8731",
    )  # fmt: skip
    [delivery] = webhookreceiver.deliveries("demo")
    assert "Port" not in delivery.headers
    assert delivery.headers["Webhook-Id"] == "m"


def test_a_delivery_signed_with_another_secret_does_not_verify(receiver_url, alice_client):
    paste(alice_client, signing.new_secret())
    deliver(receiver_url, signing.new_secret(), {"type": "domain.active"})
    [delivery] = webhookreceiver.deliveries("demo")
    assert not delivery.verified
    assert delivery.signature.startswith("does not verify: ")
    page = alice_client.get("/dev/webhooks/demo/").content.decode()
    assert "does not verify" in page
    assert ">verified<" not in page


def test_a_changed_body_does_not_verify(dev_pages, alice_client):
    secret = signing.new_secret()
    paste(alice_client, secret)
    body = b'{"type":"domain.active"}'
    headers = signing.headers(
        secret=secret, message_id="msg_1", timestamp=int(time.time()), body=body
    )
    alice_client.post(
        "/dev/webhooks/demo/", b'{"type":"domain.removed"}',
        content_type="application/json", headers=headers,
    )  # fmt: skip
    [delivery] = webhookreceiver.deliveries("demo")
    assert not delivery.verified


def test_without_a_secret_the_delivery_is_kept_and_said_unchecked(receiver_url, alice_client):
    deliver(receiver_url, signing.new_secret(), {"type": "domain.active"})
    [delivery] = webhookreceiver.deliveries("demo")
    assert delivery.signature == webhookreceiver.NO_SECRET


def test_what_is_not_a_secret_is_refused_on_the_page(dev_pages, alice_client):
    answer = alice_client.post("/dev/webhooks/demo/secret/", {"secret": ""}, follow=True)
    assert "That is not an endpoint secret" in answer.content.decode()
    assert webhookreceiver.secret("demo") == ""


def test_the_page_and_the_secret_need_a_signed_in_user(dev_pages, client):
    assert client.get("/dev/webhooks/demo/").status_code == 302
    assert client.post("/dev/webhooks/demo/secret/", {"secret": "whsec_AAAA"}).status_code == 302
    assert webhookreceiver.secret("demo") == ""


def test_a_receiver_keeps_its_newest_deliveries_only(dev_pages, settings, monkeypatch):
    monkeypatch.setattr(webhookreceiver, "KEPT", 3)
    for number in range(5):
        webhookreceiver.receive("demo", f'{{"n":{number}}}'.encode(), {})
    assert [d.body for d in webhookreceiver.deliveries("demo")] == [
        '{"n":4}', '{"n":3}', '{"n":2}'
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["Demo", "a_b", "-x", "x" * 41])
def test_a_receiver_name_outside_the_pattern_is_404(dev_pages, alice_client, name):
    assert alice_client.get(f"/dev/webhooks/{name}/").status_code == 404


def test_the_endpoint_form_says_loopback_http_is_accepted_under_debug(dev_pages, settings):
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    settings.OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
    settings.HTTP_PORT = 8123
    text = webhook_url_help()
    assert "http://127.0.0.1" in text
    assert "http://127.0.0.1:8123/dev/webhooks/demo/" in text
    url = re.search(r"http://127\.0\.0\.1:\d+/\S+/", text)
    assert url is not None
    address.check_url(url[0])  # accepted


def test_the_notifications_page_shows_the_url_help_under_the_field(
    dev_pages, settings, alice_client, shop
):
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    page = alice_client.get("/dashboard/settings/notifications/").content.decode()
    assert 'aria-describedby="id_url_helptext"' in page
    help_text = page[page.index('id="id_url_helptext"') :]
    assert "http://127.0.0.1" in help_text[: help_text.index("</div>")]
    assert "/dev/webhooks/demo/" in help_text[: help_text.index("</div>")]


def test_the_endpoint_form_says_https_only_in_production(settings):
    settings.DEBUG = False
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    assert webhook_url_help() == "A public HTTPS URL (port 443 or 8443)."
