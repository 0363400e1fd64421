"""pets' migrations: no trigger on pets_pet, since nothing keeps pages under the list version
that 0004 and 0005 made; 0006, which drops it, makes it again when reversed."""

from __future__ import annotations

import importlib

import pytest
from django.core.management import call_command
from django.db import connection

from pets.models import Category
from petstore import versions

# Migrations run outside the test's transaction.
pytestmark = pytest.mark.django_db(transaction=True)

LIST = importlib.import_module("pets.migrations.0005_list_version_generated").LIST


def left() -> tuple[bool, bool, set[str]]:
    """The list version's table and function (whether they exist), and pets_pet's triggers
    (other than the foreign keys')."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_regclass(%s) IS NOT NULL, to_regprocedure(%s) IS NOT NULL",
            [LIST.table, f"{LIST.function}()"],
        )
        table, function = cursor.fetchone()
        cursor.execute(
            "SELECT tgname FROM pg_trigger "
            "WHERE tgrelid = 'pets_pet'::regclass AND NOT tgisinternal"
        )
        return table, function, {name for (name,) in cursor.fetchall()}


def test_a_write_to_a_pet_fires_no_trigger():
    assert left() == (False, False, set())


def test_the_list_version_comes_back_whole_when_reversed_and_goes_again():
    try:
        call_command("migrate", "pets", "0005", verbosity=0)
        assert left() == (True, True, {trigger.name for trigger in LIST.triggers()})
        assert versions.missing_triggers(LIST) == []
        before = LIST.read().number
        Category.objects.create(name="Dogs").pets.create(name="Rex")
        assert LIST.read().number == before + 1
        call_command("migrate", "pets", "0004", verbosity=0)  # 0005's hand-written ones
        assert left() == (True, True, {"pets_list_version_pet", "pets_list_version_pet_truncate"})
    finally:
        call_command("migrate", "pets", verbosity=0)
    assert left() == (False, False, set())
