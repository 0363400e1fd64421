"""The Error body's `fields` are plain sentences for a person, whatever the shape of the
invalid input: a list's item or a nested object's field says where it is, never a Python
repr of DRF's error objects."""

from __future__ import annotations

import pytest

from tests.domains.api.helpers import SHOP, post, put
from tests.pets.helpers import assert_error

pytestmark = pytest.mark.django_db


def assert_plain_fields(body: dict) -> dict[str, list[str]]:
    fields = body["fields"]
    for name, messages in fields.items():
        assert isinstance(messages, list) and messages, (name, messages)
        for message in messages:
            assert isinstance(message, str), (name, message)
            assert "ErrorDetail" not in message and "string=" not in message, message
            assert not message.startswith(("{", "[")), message
    return fields


def test_a_misspelt_webhook_event_says_which_item_is_not_a_choice(api, shop):
    refused = post(
        api,
        f"{SHOP}/webhooks",
        {"url": "https://hooks.example.com/", "events": ["domain.failing", "domain.falling"]},
    )
    body = assert_error(refused, 400, "validation_error")
    assert assert_plain_fields(body) == {
        "events": ['Item 2: "domain.falling" is not a valid choice.']
    }
    assert body["message"] == "Invalid input: events."


# One refused request of each shape, across the API's operations.
REFUSED = [
    pytest.param("POST", "/v1/pets", {"name": 5, "categoryId": "x"}, id="createPet"),
    pytest.param("POST", f"{SHOP}/domains", {"hostname": ["a", "b"]}, id="addDomain"),
    pytest.param("POST", f"{SHOP}/domains", {}, id="addDomain-empty"),
    pytest.param("POST", f"{SHOP}/redirects", {"from": {}, "to": 1, "status": "x"}, id="redirect"),
    pytest.param("PUT", f"{SHOP}/primary-domain", {"hostname": {"a": 1}}, id="primary"),
    pytest.param("POST", f"{SHOP}/webhooks", {"url": [], "events": [["x"], 3]}, id="webhook"),
    pytest.param("POST", f"{SHOP}/webhooks", {"url": "https://a.test/", "events": []}, id="none"),
]


@pytest.mark.parametrize(("method", "path", "body"), REFUSED)
def test_every_validation_refusal_gives_plain_sentences(api, shop, method, path, body):
    send = post if method == "POST" else put
    refused = assert_error(send(api, path, body), 400, "validation_error")
    fields = assert_plain_fields(refused)
    assert refused["message"] == f"Invalid input: {', '.join(fields)}."
