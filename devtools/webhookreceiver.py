"""`make run`'s webhook receiver: an endpoint URL on this machine
(`http://127.0.0.1:<PORT>/dev/webhooks/<name>/`) that keeps what the platform's webhook
worker POSTs to it, and says whether each delivery's signature verifies.

The check is the one a receiver runs: the `standardwebhooks` library's `Webhook.verify`,
with the endpoint's secret as the dashboard shows it (`whsec_…`), pasted on the receiver's
page. It runs when the delivery arrives, as a receiver's would, because the library refuses
a timestamp more than five minutes from now: a delivery kept before the secret was pasted
says so rather than failing later for its age.

The deliveries and the secret are files in PETSTORE_VAR_DIR/webhooks/<name>/ (development
only: the folder is `make run`'s, as the mail inbox's is).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from standardwebhooks import Webhook
from standardwebhooks.webhooks import EmptyWebhookSecretError, WebhookVerificationError

# A receiver's name: what the URL and the folder are called.
RECEIVER_NAME = r"[a-z0-9][a-z0-9-]{0,39}"
# How many deliveries a receiver keeps: the newest, the older ones deleted.
KEPT = 50
NO_SECRET = "not checked: no secret was pasted on this page when it arrived"
VERIFIED = "verified"


def folder(name: str) -> Path:
    if not re.fullmatch(RECEIVER_NAME, name):
        raise ValueError(f"not a receiver name: {name!r}")
    return Path(settings.VAR_DIR) / "webhooks" / name


@dataclass(frozen=True)
class Delivery:
    received: str  # ISO 8601, UTC
    headers: dict[str, str]
    body: str
    signature: str  # VERIFIED, NO_SECRET, or "does not verify: <why>"

    @property
    def verified(self) -> bool:
        return self.signature == VERIFIED


def secret(name: str) -> str:
    path = folder(name) / "secret"
    return path.read_text().strip() if path.is_file() else ""


def set_secret(name: str, value: str) -> None:
    """Keep the endpoint's secret for the deliveries to come; ValueError when the library
    cannot read it as one."""
    value = value.strip()
    try:
        Webhook(value)
    except (ValueError, EmptyWebhookSecretError) as error:  # not base64, or empty
        raise ValueError(f"not a webhook secret: {error}") from None
    target = folder(name)
    target.mkdir(parents=True, exist_ok=True)
    (target / "secret").write_text(value + "\n")


def check(body: bytes, headers: dict[str, str], with_secret: str) -> str:
    """Whether the delivery's signature verifies with `with_secret`, as a receiver tells."""
    if not with_secret:
        return NO_SECRET
    lowered = {key.lower(): value for key, value in headers.items()}
    try:
        Webhook(with_secret).verify(body, lowered, json_parse=False)
    except WebhookVerificationError as error:
        return f"does not verify: {error}"
    return VERIFIED


def receive(name: str, body: bytes, headers: dict[str, str]) -> Delivery:
    """Check and keep one delivery; the oldest beyond KEPT are deleted."""
    delivery = Delivery(
        received=datetime.now(UTC).isoformat(timespec="seconds"),
        headers=dict(headers),
        body=body.decode("utf-8", errors="replace"),
        signature=check(body, headers, secret(name)),
    )
    target = folder(name)
    target.mkdir(parents=True, exist_ok=True)
    file = f"{time.time_ns():020d}-{uuid.uuid4().hex}.json"
    partial = target / f".{file}.partial"
    partial.write_text(json.dumps(asdict(delivery)))
    os.replace(partial, target / file)
    for old in _files(name)[KEPT:]:
        old.unlink(missing_ok=True)
    return delivery


def _files(name: str) -> list[Path]:
    target = folder(name)
    if not target.is_dir():
        return []
    return sorted(target.glob("[0-9]*.json"), reverse=True)


def deliveries(name: str) -> list[Delivery]:
    """The receiver's deliveries, the newest first."""
    return [Delivery(**json.loads(path.read_text())) for path in _files(name)]
