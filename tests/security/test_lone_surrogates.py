"""Text that is not Unicode (a lone UTF-16 surrogate, `"\\ud800"` in JSON) is a 400
Error body wherever it appears, never a 500: it cannot be encoded for the
idempotency fingerprint, the database or the logs."""

from __future__ import annotations

import json

import pytest

from pets.models import Pet
from petstore.apikeys.models import IdempotencyRecord
from tests.pets.helpers import assert_error

LONE = "\\ud800"  # as written inside a JSON document


def _post_raw(api, document: str, **headers):
    return api.generic("POST", "/v1/pets", document, content_type="application/json", **headers)


BODIES = {
    "in an unknown field": '{"name":"ok","categoryId":%(cat)s,"note":"%(bad)s"}',
    "in the name": '{"name":"Rex%(bad)s","categoryId":%(cat)s}',
    "a low surrogate alone": '{"name":"Rex\\udc00","categoryId":%(cat)s}',
    "a high surrogate before a normal escape": '{"name":"\\ud800\\u0041","categoryId":%(cat)s}',
    "in a nested value": '{"name":"ok","categoryId":%(cat)s,"x":{"y":["a","%(bad)s"]}}',
    "in a key": '{"name":"ok","categoryId":%(cat)s,"%(bad)s":1}',
    "in a nested key": '{"name":"ok","categoryId":%(cat)s,"x":[{"%(bad)s":null}]}',
}


@pytest.mark.parametrize("with_key", [True, False], ids=["idempotency-key", "no-key"])
@pytest.mark.parametrize("template", BODIES.values(), ids=BODIES.keys())
def test_a_lone_surrogate_in_the_body_is_a_400(api, dogs, template, with_key):
    headers = {"HTTP_IDEMPOTENCY_KEY": "k-1"} if with_key else {}
    response = _post_raw(api, template % {"cat": dogs.id, "bad": LONE}, **headers)
    body = assert_error(response, 400, "bad_request")
    assert "surrogate" in body["message"]
    assert not Pet.objects.exists()
    assert not IdempotencyRecord.objects.exists()


def test_a_proper_surrogate_pair_is_an_ordinary_character(api, dogs):
    response = _post_raw(
        api,
        '{"name":"Rex \\ud83d\\udc36","categoryId":' + str(dogs.id) + "}",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    assert response.status_code == 201
    assert response.json()["name"] == "Rex \N{DOG FACE}"


def test_bytes_that_are_not_utf8_are_a_400(api, dogs):
    body = b'{"name":"\xed\xa0\x80","categoryId":%d}' % dogs.id  # a surrogate, UTF-8 encoded
    response = api.generic("POST", "/v1/pets", body, content_type="application/json")
    assert_error(response, 400, "bad_request")


HEADERS = {
    "Idempotency-Key": "HTTP_IDEMPOTENCY_KEY",
    "X-Request-ID": "HTTP_X_REQUEST_ID",
    "User-Agent": "HTTP_USER_AGENT",
    "X-Forwarded-For": "HTTP_X_FORWARDED_FOR",
}


@pytest.mark.parametrize("meta", HEADERS.values(), ids=HEADERS.keys())
def test_a_lone_surrogate_in_a_header_is_never_a_500(api, dogs, meta, settings):
    settings.NUM_PROXIES = 1
    response = _post_raw(
        api, json.dumps({"name": "Rex", "categoryId": dogs.id}), **{meta: "k\ud800"}
    )
    if meta == "HTTP_IDEMPOTENCY_KEY":
        assert_error(response, 400, "bad_request")
    else:
        assert response.status_code == 201
    assert "\ud800" not in response.get("X-Request-ID", "")


def test_a_lone_surrogate_in_the_bearer_token_is_a_401(anon):
    response = anon.get("/v1/pets", HTTP_AUTHORIZATION="Bearer ps_\ud800")
    assert_error(response, 401, "unauthorized")
