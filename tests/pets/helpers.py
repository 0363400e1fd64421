"""Assertions and request helpers shared by the pets API tests."""

from __future__ import annotations

import json

from django.core.cache import cache

from petstore.api.throttles import Policy, counter_key


def bearer(plaintext: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


def post_json(client, path: str, body, **extra):
    """POST a raw JSON document (any JSON value, not only objects)."""
    return client.generic("POST", path, json.dumps(body), content_type="application/json", **extra)


def assert_error(response, status: int, code: str) -> dict:
    """The response is the Error body with this status and code; returns the body."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["code"] == code
    assert body["status"] == status
    assert isinstance(body["message"], str) and body["message"]
    for messages in body.get("fields", {}).values():  # sentences, never a Python repr
        assert all(isinstance(m, str) and "ErrorDetail(" not in m for m in messages), messages
    return body


def clear_rate_limits(*idents: str) -> None:
    """Forget the rate-limit counters of these API key prefixes and client addresses,
    whatever the window (petstore.api.throttles.counter_key)."""

    cache.delete_many(
        [
            counter_key(Policy(name, 0, window), ident)
            for ident in idents
            for name in ("key", "address", "failed-key")
            for window in (1, 60, 3600, 86400)
        ]
    )
