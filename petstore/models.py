"""Operations data: how often each kind of background task failed."""

from __future__ import annotations

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
