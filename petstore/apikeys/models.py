"""The API key row and its queryset (the key's format: keyformat.py), and the Idempotency-Key
records of each key (petstore/api/idempotency.py)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from petstore.apikeys.keyformat import KEY_SCHEME
from petstore.apikeys.scopes import Scope

# Every key ends: this many days after it is made unless its maker chooses fewer, and never
# more than MAX_KEY_DAYS (GitHub's fine-grained tokens: at most a year).
DEFAULT_KEY_DAYS = 90
MAX_KEY_DAYS = 366


class ApiKeyQuerySet(models.QuerySet):
    def active(self) -> ApiKeyQuerySet:
        """Not revoked (an expired key is found, and answered 401 `key_expired`)."""
        return self.filter(revoked_at__isnull=True)

    def ending_untold(self, *, before: datetime, now: datetime) -> ApiKeyQuerySet:
        """Active keys still working that end before `before` and whose owners were not
        told yet."""
        return self.active().filter(
            expires_at__gt=now, expires_at__lte=before, expiry_told_at__isnull=True
        )


class ApiKey(models.Model):
    """A bearer key. Only a SHA-256 of the key is stored, and finds the row (keycache:
    a wrong secret misses as an unknown prefix does); `prefix` names the key to people
    and to the lookup cache."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100, default="default", help_text="A label for humans.")
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The client address of that use (petstore.http.clientaddress), written with it.
    last_used_ip = models.GenericIPAddressField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    # What the key may be used for (petstore/apikeys/scopes.py), never more than its user's
    # role allows on a project (domains/access.py).
    scopes = ArrayField(models.CharField(max_length=32, choices=Scope.choices), default=list)
    expires_at = models.DateTimeField()
    # When the key's owners were told it ends soon (the key.expiring event): told once.
    expiry_told_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        # The table the `pets` app created, taken over as is (migration apikeys.0001): a
        # rename would break the processes of the release before during a rolling deploy.
        db_table = "pets_apikey"
        ordering = ["-created_at", "-id"]
        # A request's key is found by its hash (keycache); one plain B-tree, no LIKE index.
        indexes = [models.Index(fields=["key_hash"], name="apikeys_key_hash_idx")]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.display_prefix} ({self.name})"

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def display_prefix(self) -> str:
        return f"{KEY_SCHEME}_{self.prefix}"


class IdempotencyRecord(models.Model):
    """One Idempotency-Key of one API key and the answer to replay, written once, in the
    transaction of the request's writes (petstore.api.idempotency)."""

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # SHA-256 of method, path and body
    expires_at = models.DateTimeField(db_index=True)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField(null=True, blank=True)
    response_headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table and constraint names of the pets app, which created the table.
        db_table = "pets_idempotencyrecord"
        constraints = [
            models.UniqueConstraint(fields=["api_key", "key"], name="pets_idempotency_unique_key"),
            models.CheckConstraint(
                condition=Q(response_status__gte=100), name="pets_idempotency_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.key
