"""Version numbers the database raises whenever certain rows change.

An app's migration creates a one-row table (`id = 1`, `version`) and triggers on the tables
it watches, so that every write path, the ORM's, a bulk update's, raw SQL's or a cascade's,
raises the number; nothing that writes those rows can forget to. A process may then keep
what it read from the rows for as long as the number stays the same. The triggers are
deferred constraint triggers, so the number moves when the writing transaction commits, in
the same commit as the rows: a reader that sees the new number sees the new rows. A
trigger dropped by hand or by a migration that remakes a watched table would leave the
number still: `missing_triggers` finds it.

A version's row is locked from its trigger to the commit, and Django's foreign keys are
checked at commit too (they are deferred), possibly after it: so a row that code locks to
serialise work on it (`select_for_update`) is locked FOR NO KEY UPDATE (`no_key=True`), which
lets those checks through. A plain FOR UPDATE would make a committing writer that holds the
version wait on it, while the lock's holder waits for the version at its own commit: a
deadlock (tests/domains/edge/test_version.py).

The version tables are no models: Django's test flush would truncate them, and a number
that starts again at 0 could return to a value a process already holds. For the same reason, a
database restored from a backup or made again under running processes can show them a number
they already hold for other rows: restart the web and edge processes after one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, migrations


def current(table: str) -> int:
    """The version in `table` now (one indexed read of a one-row table)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT version FROM {table} WHERE id = 1")  # noqa: S608 (a constant)
        row = cursor.fetchone()
    if row is None:
        raise LookupError(f"{table} has no row: run `manage.py migrate`")
    return int(row[0])


def missing_triggers(triggers: Sequence[str]) -> list[str]:
    """Of `triggers` (their names), the ones this database lacks; empty when all are
    there."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        found = {name for (name,) in cursor.fetchall()}
    return [name for name in triggers if name not in found]


def migration(
    table: str, *, create: Mapping[str, Sequence[str]], drop: Mapping[str, Sequence[str]]
) -> migrations.RunPython:
    """The operation that makes a version: its table, then `create[vendor]` (the first row,
    the triggers); backwards, `drop[vendor]`, then the table. The statements are by vendor
    as the frozen migrations that call it pass them; only "postgresql" is ever run."""

    def statements(schema_editor: Any, by_vendor: Mapping[str, Sequence[str]]) -> Sequence[str]:
        vendor = schema_editor.connection.vendor
        if vendor not in by_vendor:
            raise NotImplementedError(f"{table} has no triggers for {vendor}")
        return by_vendor[vendor]

    def forwards(apps: Any, schema_editor: Any) -> None:
        for statement in statements(schema_editor, create):
            schema_editor.execute(statement, params=None)

    def backwards(apps: Any, schema_editor: Any) -> None:
        for statement in [*statements(schema_editor, drop), f"DROP TABLE {table}"]:
            schema_editor.execute(statement, params=None)

    return migrations.RunPython(forwards, backwards)
