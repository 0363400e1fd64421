"""The API key row and its queryset (the key's format: keys.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from petstore.apikeys.keys import KEY_SCHEME


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
        # The table the `pets` app created before the model moved here (migration
        # apikeys.0001 took it over as is): no rename, so processes of the previous
        # release keep reading the same table while a deploy migrates.
        db_table = "pets_apikey"
        ordering = ["-created_at", "-id"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.display_prefix} ({self.name})"

    @property
    def display_prefix(self) -> str:
        return f"{KEY_SCHEME}_{self.prefix}"
