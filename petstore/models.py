"""Operations data (how often each kind of background task failed, when each kind of backup
last finished), and the language each account chose."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TaskFailure(models.Model):
    """One row per (task, kind), counted up atomically; staff read it in the admin."""

    class Kind(models.TextChoices):
        FAILED = "failed", "Raised an error"
        ENQUEUE = "enqueue", "Could not be queued"

    task_name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    count = models.PositiveBigIntegerField(default=0)
    last_failed_at = models.DateTimeField()
    last_error = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task_name", "kind"], name="task_failure_once_per_kind")
        ]
        ordering = ["-last_failed_at"]

    def __str__(self) -> str:
        return f"{self.task_name} ({self.get_kind_display()}): {self.count}"


class AccountLanguage(models.Model):
    """The language a person chose with the dashboard's switch (petstore/languages.py): their
    mail is written in it, and signing in on another browser opens the dashboard in it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="language_choice"
    )
    # One of settings.LANGUAGES; a code no longer offered falls back to LANGUAGE_CODE.
    language = models.CharField(max_length=16)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"


class BackupSuccess(models.Model):
    """The newest backup of each kind that finished, one row a kind, written by the command
    that took it (petstore/backups/). Kept in the database rather than Redis, which keeps
    nothing across a restart, so every web process reports the same time
    (petstore_backup_last_success_timestamp_seconds) and PetstoreBackupStale never fires for
    a Redis restart. A restore brings back the row as it was at its target: the alert then
    asks for the new backup the restored cluster needs anyway."""

    class Kind(models.TextChoices):
        BASE = "pgbackrest", "pgBackRest base backup (point-in-time recovery with the WAL)"
        LOGICAL = "logical", "Logical copy (manage.py backup)"

    kind = models.CharField(max_length=20, choices=Kind.choices, primary_key=True)
    finished_at = models.DateTimeField()
    detail = models.CharField(max_length=500, blank=True)

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.finished_at:%Y-%m-%d %H:%M:%S%z}"
