"""The writes of the pets app. Views, admin, commands and tests all call these."""

from __future__ import annotations

from django.core.management.color import no_style
from django.db import connection, transaction
from django.db.models import Model

from pets.models import Category, Pet, PetStatus

DEMO_CATEGORIES = [(1, "Dogs"), (2, "Cats"), (3, "Birds"), (4, "Fish"), (5, "Reptiles")]


def pet_create(*, name: str, category: Category, status: str = PetStatus.AVAILABLE) -> Pet:
    return Pet.objects.create(name=name, category=category, status=status)


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


def _reset_sequences(*models: type[Model]) -> None:
    """After explicit ids, move the tables' sequences past them."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(models))
    if statements:
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
