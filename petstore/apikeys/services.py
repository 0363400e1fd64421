"""The writes of API keys. The admin, the commands and the tests all call these."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from petstore.apikeys import keycache
from petstore.apikeys.keyformat import generate_key, hash_key
from petstore.apikeys.models import ApiKey


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str  # shown once, never stored


def api_key_issue(*, user: User, name: str = "default") -> IssuedKey:
    prefix, plaintext = generate_key()
    api_key = ApiKey.objects.create(
        user=user, name=name, prefix=prefix, key_hash=hash_key(plaintext)
    )
    return IssuedKey(api_key=api_key, plaintext=plaintext)


def api_key_issue_for_username(*, username: str, name: str = "default") -> tuple[IssuedKey, bool]:
    """Issue a key for `username`, creating the user (no password) if needed."""
    with transaction.atomic():
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        return api_key_issue(user=user, name=name), created


def api_key_revoke(*, api_key: ApiKey) -> bool:
    """Revoke a key; False if it was already revoked.

    The one way keys are revoked (admin action, `revokeapikey`, tests): it also drops
    the key from the shared lookup cache, so every process refuses it from the next
    request on.
    """
    with transaction.atomic():
        keycache.forget(api_key.prefix)
        changed = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    return bool(changed)
