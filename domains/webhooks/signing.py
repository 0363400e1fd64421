"""Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is
`whsec_<base64 of random bytes>`, the signature `v1,<base64 HMAC-SHA256 of
"{id}.{timestamp}.{body}">`. Tested against the `standardwebhooks` package's verifier."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def sign(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(*, secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(
            secret=secret, message_id=message_id, timestamp=timestamp, body=body
        ),
    }
