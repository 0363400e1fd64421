"""The API answers in English whatever the request asks (petstore/api/language.py): a
client that sends `Accept-Language: de`, or a browser with the switch's cookie, gets DRF's
own messages and the services' refusals in English, said in Content-Language, while the
dashboard says the same refusal in German."""

from __future__ import annotations

import html

import pytest
from django.conf import settings

from tests.domains.api.helpers import SHOP, post
from tests.pets.helpers import assert_error

pytestmark = pytest.mark.django_db

GERMAN = {"HTTP_ACCEPT_LANGUAGE": "de"}


def test_drfs_own_messages_stay_english_for_a_german_client(api, shop):
    refused = post(
        api,
        f"{SHOP}/webhooks",
        {"url": "https://hooks.example.com/", "events": ["domain.falling"]},
        **GERMAN,
    )
    body = assert_error(refused, 400, "validation_error")
    assert body["fields"] == {"events": ['Item 1: "domain.falling" is not a valid choice.']}
    assert body["message"] == "Invalid input: events."
    assert refused["Content-Language"] == settings.LANGUAGE_CODE
    assert "Accept-Language" not in refused.get("Vary", "")


def test_a_services_refusal_is_english_on_the_api_and_german_on_the_dashboard(
    api, alice_client, shop, www
):
    api.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"  # the switch's cookie is not read either
    refused = post(api, f"{SHOP}/domains", {"hostname": "www.example.test"}, **GERMAN)
    body = assert_error(refused, 409, "duplicate")
    assert body["message"] == "www.example.test is already added to this project."
    assert refused["Content-Language"] == settings.LANGUAGE_CODE
    page = alice_client.post(
        "/dashboard/projects/shop/domains/add/", {"hostname": "www.example.test"}, **GERMAN
    )
    said = html.unescape(page.content.decode())
    assert "www.example.test ist diesem Projekt bereits hinzugefügt." in said
    assert body["message"] not in said


def test_an_unknown_path_is_english_too(api):
    answer = api.get("/v1/no-such-thing", **GERMAN)
    assert answer.status_code == 404
    assert answer.json()["message"] == "No operation at /v1/no-such-thing."
    assert answer["Content-Language"] == settings.LANGUAGE_CODE


def test_a_host_name_and_a_webhook_url_refused_stay_english_for_a_german_client(
    api, shop, dns_server
):
    refused = post(api, f"{SHOP}/domains", {"hostname": "www.*.example.com"}, **GERMAN)
    body = assert_error(refused, 400, "wildcard")
    assert body["message"] == "A wildcard is a leading *. only, for example *.shop.example.com."
    refused = post(
        api,
        f"{SHOP}/webhooks",
        {"url": "https://hooks.example.test:22/", "events": ["domain.failing"]},
        **GERMAN,
    )
    body = assert_error(refused, 400, "webhook_port")
    assert body["message"] == "A webhook URL's port must be 443 or 8443 (HTTPS), not 22."
