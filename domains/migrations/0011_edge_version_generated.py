"""The edge version's function and triggers, made from its declaration (petstore/versions/)
in place of 0010's hand-written ones: the function names its table with the migration's
schema under a pinned search_path, so a writer with another search_path raises this table.

The declaration is copied here, not imported: this migration must make the same triggers
whatever domains/edge/version.py says later (tests/petstore/test_versions.py holds the two
equal until a later migration replaces them again).
"""

import importlib

from django.db import migrations

from petstore.versions import Version, Watch, replacing

first = importlib.import_module("domains.migrations.0010_edge_version")

EDGE = Version(
    table="domains_edge_version",
    watches=[
        Watch("domains_certificate", "INSERT OR UPDATE OR DELETE"),
        Watch("domains_domain", "INSERT OR DELETE"),
        Watch("domains_domain", "UPDATE", columns=("state", "hostname")),
    ],
)


class Migration(migrations.Migration):
    dependencies = [
        ("domains", "0010_edge_version"),
    ]

    operations = [
        replacing(
            EDGE,
            old_create=[s for s in first.POSTGRESQL if s != first.FIRST_ROW],
            old_drop=first.POSTGRESQL_DROP,
        )
    ]
