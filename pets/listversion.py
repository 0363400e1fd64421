"""The list version: a number the database raises whenever a pet is added, changed or
removed, by whatever path (petstore/versions.py says how). While it stays the same, every
page of listPets is what it was (pets/api/hotpath.py keeps them)."""

from __future__ import annotations

from petstore import versions

# Made by the migrations (pets 0004 made the table, 0005 these triggers): a change here
# needs a migration that replaces them (`versions.replacing`).
LIST = versions.Version(
    table="pets_list_version",
    watches=[versions.Watch("pets_pet", "INSERT OR UPDATE OR DELETE")],
)


def current() -> int:
    """The number now (one indexed read of a one-row table)."""
    return LIST.read().number


def missing_triggers() -> list[str]:
    return versions.missing_triggers(LIST)
