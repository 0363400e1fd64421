"""The audit log: every change to a project, by whom, written once in the change's
transaction (domains/services/audit.py). The rows outlive what they name (no foreign keys:
a removed domain, member or project leaves its lines as they were), and the database
refuses any UPDATE, and any DELETE but the retention purge's (migration
domains.0022_audit_append_only)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

# Who acts is known on the ground floor (the request, a command); the rows keep its type.
from petstore.actors import ActorType

__all__ = ["ActorType", "AuditEntry"]


class AuditEntry(models.Model):
    project_id = models.BigIntegerField(db_index=True)
    at = models.DateTimeField(default=timezone.now)
    actor_type = models.CharField(max_length=10, choices=ActorType.choices)
    actor_user_id = models.BigIntegerField(null=True, blank=True)
    actor_username = models.CharField(max_length=150, blank=True)
    actor_key_prefix = models.CharField(max_length=16, blank=True)
    action = models.CharField(max_length=60)
    target = models.CharField(max_length=300, blank=True)
    # {"field": [before, after]}: never a secret.
    changes = models.JSONField(default=dict, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    request_id = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["project_id", "-at", "-id"], name="domains_audit_page")]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.action} {self.target}"
