"""When each kind of backup last finished: written by the backup that finished, read by the
metrics endpoint at scrape time (petstore/metrics/backups.py)."""

from __future__ import annotations

from django.utils import timezone

from petstore.models import BackupSuccess


class BackupError(Exception):
    """The backup (or the step of a restore) was not done; the message says why, in one line."""


def backup_succeeded(*, kind: BackupSuccess.Kind, detail: str = "") -> BackupSuccess:
    """Record that a backup of `kind` finished now."""
    record, _ = BackupSuccess.objects.update_or_create(
        kind=kind, defaults={"finished_at": timezone.now(), "detail": detail[:500]}
    )
    return record


def last_line(stderr: str) -> str:
    """A program's last line of complaint, for a one-line BackupError."""
    return (stderr.strip().splitlines() or ["no message"])[-1]
