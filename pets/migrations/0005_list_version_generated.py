"""The list version's function and triggers, made from its declaration (petstore/versions/)
in place of 0004's hand-written ones: the function names its table with the migration's
schema under a pinned search_path, so a writer with another search_path raises this table.

The declaration is copied here, not imported: this migration must make the same triggers
whatever the app declares later (0006 drops them, and makes them again from this copy when
reversed).
"""

import importlib

from django.db import migrations

from petstore.versions import Version, Watch, replacing

first = importlib.import_module("pets.migrations.0004_list_version")

LIST = Version(
    table="pets_list_version",
    watches=[Watch("pets_pet", "INSERT OR UPDATE OR DELETE")],
)


class Migration(migrations.Migration):
    dependencies = [
        ("pets", "0004_list_version"),
    ]

    operations = [
        replacing(
            LIST,
            old_create=[s for s in first.POSTGRESQL if s != first.FIRST_ROW],
            old_drop=first.POSTGRESQL_DROP,
        )
    ]
