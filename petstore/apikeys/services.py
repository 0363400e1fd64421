"""The writes of API keys. The admin, the commands and the tests all call these."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from petstore.apikeys import keycache
from petstore.apikeys.keyformat import generate_key, hash_key
from petstore.apikeys.models import DEFAULT_KEY_DAYS, MAX_KEY_DAYS, ApiKey
from petstore.apikeys.scopes import ALL_SCOPES


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str  # shown once, never stored


def api_key_issue(
    *,
    user: User,
    name: str = "default",
    scopes: Iterable[str] = ALL_SCOPES,
    days: int = DEFAULT_KEY_DAYS,
) -> IssuedKey:
    """A new key of `user`'s with `scopes`, ending `days` from now (at most MAX_KEY_DAYS)."""
    if not 1 <= days <= MAX_KEY_DAYS:
        raise ValidationError(
            f"A key lasts 1 to {MAX_KEY_DAYS} days; {days} is out of range.", code="key_lifetime"
        )
    prefix, plaintext = generate_key()
    api_key = ApiKey.objects.create(
        user=user,
        name=name,
        prefix=prefix,
        key_hash=hash_key(plaintext),
        scopes=sorted(set(scopes)),
        expires_at=timezone.now() + timedelta(days=days),
    )
    return IssuedKey(api_key=api_key, plaintext=plaintext)


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
