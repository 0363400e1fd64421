"""Requests to the domains API, as a client script sends them."""

from __future__ import annotations

import json

SHOP = "/v1/projects/shop"


def post(client, path: str, body=None, **extra):
    """POST a JSON body (or none)."""
    if body is None:
        return client.post(path, **extra)
    return client.generic("POST", path, json.dumps(body), content_type="application/json", **extra)


def put(client, path: str, body, **extra):
    return client.generic("PUT", path, json.dumps(body), content_type="application/json", **extra)
