"""The list version: a number the database raises whenever a pet is added, changed or
removed (triggers, created by the migration `list_version`; petstore/versions.py says how).
While it stays the same, every page of listPets is what it was."""

from __future__ import annotations

from petstore import versions

TABLE = "pets_list_version"

# What the migration creates; `missing_triggers` looks for them by name.
TRIGGERS = ("pets_list_version_pet", "pets_list_version_pet_truncate")


def current() -> int:
    """The version now (one indexed read of a one-row table)."""
    return versions.current(TABLE)


def missing_triggers() -> list[str]:
    return versions.missing_triggers(TRIGGERS)
