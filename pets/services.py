"""The writes of the pets app. Views, admin, commands and tests all call these."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.management.color import no_style
from django.db import connection, transaction
from django.utils import timezone

from pets.models import Category, Pet, PetStatus
from petstore.api import keycache
from petstore.api.keys import generate_key, hash_key
from petstore.api.models import ApiKey

DEMO_CATEGORIES = [(1, "Dogs"), (2, "Cats"), (3, "Birds"), (4, "Fish"), (5, "Reptiles")]


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str  # shown once, never stored


def pet_create(*, name: str, category: Category, status: str = PetStatus.AVAILABLE) -> Pet:
    return Pet.objects.create(name=name, category=category, status=status)


def api_key_issue(*, user: AbstractBaseUser, name: str = "default") -> IssuedKey:
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


def demo_categories_load() -> list[tuple[Category, bool]]:
    """Create the demo categories with fixed ids; existing rows are left alone."""
    results = []
    with transaction.atomic():
        for pk, name in DEMO_CATEGORIES:
            existing = (
                Category.objects.filter(pk=pk).first() or Category.objects.filter(name=name).first()
            )
            if existing:
                results.append((existing, False))
            else:
                results.append((Category.objects.create(pk=pk, name=name), True))
        _reset_sequences(Category)
    return results


def _reset_sequences(*models) -> None:
    """After explicit ids, move PostgreSQL's sequence past them (SQLite needs nothing)."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(models))
    if statements:
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
