"""The list version gone: its triggers on pets_pet, their function and its one-row table.

Nothing reads it: listPets reads every page (docs/decisions/performance.md, "Kept pages"),
so every write to a pet would pay a deferred trigger for nothing.

Backwards makes them again as 0004 and 0005 left them, the row starting again at 0: a
process that kept anything under a number keys it by the version table's OID too
(petstore/versions/declaration.py's `Stamp`), which a new table changes. The declaration and the table
are 0005's and 0004's, imported as history.
"""

import importlib
from typing import Any

from django.db import migrations

first = importlib.import_module("pets.migrations.0004_list_version")
generated = importlib.import_module("pets.migrations.0005_list_version_generated")


def _schema(schema_editor: Any) -> str:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        return cursor.fetchone()[0]


def _run(schema_editor: Any, statements: list[str]) -> None:
    for statement in statements:
        schema_editor.execute(statement, params=None)


def drop(apps: Any, schema_editor: Any) -> None:
    version = generated.LIST
    _run(
        schema_editor,
        [*version.drop_statements(_schema(schema_editor)), f"DROP TABLE {version.table}"],
    )


def make_again(apps: Any, schema_editor: Any) -> None:
    _run(
        schema_editor,
        [
            first.CREATE_TABLE["postgresql"],
            first.FIRST_ROW,
            *generated.LIST.create_statements(_schema(schema_editor)),
        ],
    )


class Migration(migrations.Migration):
    dependencies = [
        ("pets", "0005_list_version_generated"),
    ]

    operations = [migrations.RunPython(drop, make_again)]
