"""The bearer API key: only a SHA-256 of the key is stored; its random prefix finds the row.

The model belongs to the `pets` app (its table and migrations are that app's, and
pets/models.py registers it), while the code that issues, caches and checks keys
lives here beside it, in the API platform every /v1 resource shares.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from petstore.api.keys import KEY_SCHEME


class ApiKeyQuerySet(models.QuerySet):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A bearer key. Only a SHA-256 of the key is stored; `prefix` finds the row."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100, default="default", help_text="A label for humans.")
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        app_label = "pets"
        ordering = ["-created_at", "-id"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.display_prefix} ({self.name})"

    @property
    def display_prefix(self) -> str:
        return f"{KEY_SCHEME}_{self.prefix}"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None
