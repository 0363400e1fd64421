"""The migration operations of versions: the first table and hand-written triggers
(`migration`, frozen in the first version migrations), and the replacement of a version's
function and triggers by those its declaration makes (`replacing`), or by those of its next
declaration (`superseding`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import migrations

from petstore.versions.declaration import Version


def _schema(schema_editor: Any) -> str:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        return cursor.fetchone()[0]


def replacing(
    version: Version, *, old_create: Sequence[str], old_drop: Sequence[str]
) -> migrations.RunPython:
    """The operation that replaces a version's function and triggers (made by `old_create`,
    removed by `old_drop`) with those of `version`, in the schema the migration runs in;
    backwards, the reverse. The table and its row stay."""

    def run(schema_editor: Any, statements: Sequence[str]) -> None:
        for statement in statements:
            schema_editor.execute(statement, params=None)

    def forwards(apps: Any, schema_editor: Any) -> None:
        run(schema_editor, [*old_drop, *version.create_statements(_schema(schema_editor))])

    def backwards(apps: Any, schema_editor: Any) -> None:
        run(schema_editor, [*version.drop_statements(_schema(schema_editor)), *old_create])

    return migrations.RunPython(forwards, backwards)


def superseding(old: Version, new: Version) -> migrations.RunPython:
    """The operation that replaces the function and triggers of one declaration (`old`, made by
    an earlier `replacing` or `superseding`) with those of the next (`new`, of the same table),
    in the schema the migration runs in; backwards, the reverse. The table and its row stay."""

    def swap(schema_editor: Any, gone: Version, made: Version) -> None:
        schema = _schema(schema_editor)
        for statement in [*gone.drop_statements(schema), *made.create_statements(schema)]:
            schema_editor.execute(statement, params=None)

    def forwards(apps: Any, schema_editor: Any) -> None:
        swap(schema_editor, old, new)

    def backwards(apps: Any, schema_editor: Any) -> None:
        swap(schema_editor, new, old)

    return migrations.RunPython(forwards, backwards)


def migration(
    table: str, *, create: Mapping[str, Sequence[str]], drop: Mapping[str, Sequence[str]]
) -> migrations.RunPython:
    """The operation of the first version migrations (pets 0004, domains 0010, frozen): the
    table, then `create[vendor]` (the first row, hand-written triggers); backwards,
    `drop[vendor]`, then the table. Only "postgresql" runs: the settings refuse any other
    database."""

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
