"""`make run`'s mail inbox: every mail the platform sends under DEBUG kept as a file in
EMAIL_FILE_PATH (var/mail), one `.eml` a message, and read back for `/dev/mail/`.

The web process (address confirmations, invitations) and the workers (digests, a disabled
endpoint) each send with their own connection; the folder is the one place they meet, as
Django's file-based backend would have it, but one file a message (that backend appends a
connection's messages to one log file) so that a page can list, order and open each. A file
is written under a temporary name and renamed: a page never reads half a mail.

Each mail also leaves one line in its process's output, with the address to read it at,
rather than the whole message among the access-log lines.
"""

from __future__ import annotations

import os
import re
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage as ParsedMessage
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.message import EmailMessage

# `<nanoseconds>-<random>.eml`: names sort by the time they were kept; the random part
# keeps two processes' mail of one nanosecond apart. The name without `.eml` is the mail's
# address in the inbox.
NAME = re.compile(r"^\d{20}-[0-9a-f]{32}$")
SUFFIX = ".eml"


def folder() -> Path:
    return Path(settings.EMAIL_FILE_PATH)


class InboxBackend(BaseEmailBackend):
    """EMAIL_BACKEND under `make run` (EMAIL_URL `inbox://`, DEBUG's default)."""

    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        kept = 0
        for message in email_messages:
            if not message.recipients():
                continue
            try:
                name = keep(message.message().as_bytes())
            except OSError:
                if not self.fail_silently:
                    raise
                continue
            print(
                f"mail: {message.subject!r} to {', '.join(message.recipients())}: "
                f"http://localhost:{settings.HTTP_PORT}/dev/mail/{name}/",
                file=sys.stderr,
                flush=True,
            )
            kept += 1
        return kept


def keep(raw: bytes, into: Path | None = None) -> str:
    """Write one message into the inbox; its name."""
    target = into or folder()
    target.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{uuid.uuid4().hex}"
    partial = target / f".{name}.partial"
    partial.write_bytes(raw)
    os.replace(partial, target / f"{name}{SUFFIX}")
    return name


@dataclass(frozen=True)
class Mail:
    """One kept message as the inbox shows it."""

    name: str
    subject: str
    sender: str
    to: str
    date: datetime | None
    text: str
    html: str | None


def _parse(path: Path) -> Mail:
    parsed: Any = message_from_bytes(path.read_bytes(), policy=policy.default)
    assert isinstance(parsed, ParsedMessage)
    text = parsed.get_body(preferencelist=("plain",))
    html = parsed.get_body(preferencelist=("html",))
    try:
        date = parsedate_to_datetime(str(parsed["Date"])) if parsed["Date"] else None
    except (TypeError, ValueError):
        date = None
    if date is not None and date.tzinfo is None:  # Django writes UTC as `-0000`
        date = date.replace(tzinfo=UTC)
    return Mail(
        name=path.stem,
        subject=str(parsed["Subject"] or ""),
        sender=str(parsed["From"] or ""),
        to=", ".join(str(parsed[header]) for header in ("To", "Cc") if parsed[header]),
        date=date,
        text=text.get_content() if text is not None else "",
        html=html.get_content() if html is not None else None,
    )


def newest_first(limit: int = 200) -> list[Mail]:
    """The inbox's latest `limit` messages, the newest first."""
    if not folder().is_dir():
        return []
    names = sorted(
        (path.stem for path in folder().glob(f"*{SUFFIX}") if NAME.match(path.stem)),
        reverse=True,
    )
    return [_parse(folder() / f"{name}{SUFFIX}") for name in names[:limit]]


def read(name: str) -> Mail | None:
    """One message by its name, or None (a name that is not an inbox file's never reaches
    the file system)."""
    if not NAME.match(name):
        return None
    path = folder() / f"{name}{SUFFIX}"
    return _parse(path) if path.is_file() else None
