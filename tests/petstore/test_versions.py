"""The version primitive (petstore/versions.py): a declaration makes its triggers, the
migrations make exactly what the apps declare, a writer's search_path cannot send the raise
elsewhere, a trigger dropped or disabled is missing, and the watcher's two contracts.
"""

from __future__ import annotations

import importlib
import math

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from domains.edge import version as edge_version
from pets import listversion
from pets.models import Category, Pet
from petstore import versions
from petstore.versions import Version, Watch, Watcher

# Committed writes: the version moves when the writing transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

LIST = listversion.LIST
DECLARED = [
    (LIST, "pets.migrations.0005_list_version_generated", "LIST"),
    (edge_version.EDGE, "domains.migrations.0011_edge_version_generated", "EDGE"),
]


class RolledBack(Exception):
    pass


def test_a_declaration_names_its_triggers_after_its_table_the_watched_table_and_events():
    version = Version(
        table="things_version",
        watches=[
            Watch("things_thing", "INSERT OR DELETE"),
            Watch("things_thing", "UPDATE", columns=("name",)),
            Watch("things_part", "INSERT OR UPDATE OR DELETE"),
        ],
    )
    assert version.triggers() == [
        ("things_version__things_thing__id", "things_thing"),
        ("things_version__things_thing__u", "things_thing"),
        ("things_version__things_part__iud", "things_part"),
        ("things_version__things_thing__t", "things_thing"),  # TRUNCATE, once per table
        ("things_version__things_part__t", "things_part"),
    ]
    created = "\n".join(version.create_statements("app"))
    assert 'UPDATE "app"."things_version"' in created  # the migration's schema, named
    assert "SET search_path = pg_catalog, pg_temp" in created
    assert 'AFTER UPDATE OF "name" ON "app"."things_thing"' in created
    assert 'WHEN ((OLD."name" IS DISTINCT FROM NEW."name"))' in created


@pytest.mark.parametrize(
    "watches",
    [
        [Watch("t", "INSERT"), Watch("t", "INSERT")],  # two triggers of one name
        [Watch("t" * 50, "INSERT")],  # a name past PostgreSQL's 63 bytes
    ],
)
def test_a_declaration_that_cannot_be_made_is_refused(watches):
    with pytest.raises(ValueError):
        Version(table="things_version", watches=watches)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Watch("t", "TRUNCATE"),  # implied by every watch
        lambda: Watch("t", "INSERT OR UPSERT"),
        lambda: Watch("t", "INSERT OR UPDATE", columns=("name",)),  # OLD is no INSERT's
    ],
)
def test_a_watch_that_cannot_be_made_is_refused(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize(("declared", "module", "name"), DECLARED)
def test_the_latest_migration_made_what_the_app_declares(declared, module, name):
    """A declaration changed without a migration that replaces the triggers would look for
    triggers no database has."""
    assert getattr(importlib.import_module(module), name) == declared
    assert versions.missing_triggers(declared) == []


def test_the_migrations_go_back_to_the_hand_written_triggers_and_forward_again():
    def names() -> set[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'pets_list_version%%'")
            return {name for (name,) in cursor.fetchall()}

    assert names() == {trigger.name for trigger in LIST.triggers()}
    try:
        call_command("migrate", "pets", "0004", verbosity=0)
        assert names() == {"pets_list_version_pet", "pets_list_version_pet_truncate"}
    finally:
        call_command("migrate", "pets", verbosity=0)
    assert names() == {trigger.name for trigger in LIST.triggers()}
    before = listversion.current()
    Category.objects.create(name="Dogs").pets.create(name="Rex")
    assert listversion.current() == before + 1


def test_a_writer_with_another_search_path_moves_the_real_version():
    """A schema earlier in the writer's search_path has a table of the version's name: the
    pet written is the real one (the writer's path finds no other pets table), and so is the
    version raised."""
    dogs = Category.objects.create(name="Dogs")
    before = listversion.current()
    with connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA decoy")
        cursor.execute(f"CREATE TABLE decoy.{LIST.table} (LIKE public.{LIST.table})")
        cursor.execute(f"INSERT INTO decoy.{LIST.table} (id, version) VALUES (1, 0)")
        try:
            cursor.execute("SET search_path = decoy, public")
            cursor.execute(
                "INSERT INTO pets_pet (name, category_id, status, created_at, updated_at) "
                "VALUES ('Rex', %s, 'available', now(), now())",
                [dogs.pk],
            )
            cursor.execute(f"SELECT version FROM {LIST.table}")
            assert cursor.fetchone() == (0,)  # the decoy's, untouched
        finally:
            cursor.execute("RESET search_path")
            cursor.execute("DROP SCHEMA decoy CASCADE")
    assert listversion.current() == before + 1
    assert Pet.objects.get().name == "Rex"


@pytest.mark.parametrize(
    "how",
    [
        "DROP TRIGGER {name} ON {table}",
        "ALTER TABLE {table} DISABLE TRIGGER {name}",
        "ALTER TABLE {table} ENABLE REPLICA TRIGGER {name}",
    ],
    ids=["dropped", "disabled", "replica only"],
)
def test_a_trigger_dropped_or_disabled_is_missing(how):
    name, table = LIST.triggers()[0]
    with pytest.raises(RolledBack), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(how.format(name=name, table=table))
        assert versions.missing_triggers(LIST) == [name]
        raise RolledBack
    assert versions.missing_triggers(LIST) == []


def test_a_trigger_of_the_name_on_another_table_is_missing():
    name, table = LIST.triggers()[0]
    with pytest.raises(RolledBack), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER {name} ON {table}")
            cursor.execute(
                f"CREATE TRIGGER {name} AFTER INSERT ON pets_category "
                f"FOR EACH ROW EXECUTE FUNCTION {LIST.function}()"
            )
        assert versions.missing_triggers(LIST) == [name]
        raise RolledBack


def test_a_stamp_is_the_number_with_the_databases_incarnation():
    stamp = LIST.read()
    assert stamp.number == listversion.current()
    started, database, table = stamp.incarnation
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_postmaster_start_time(), "
            "(SELECT oid FROM pg_database WHERE datname = current_database()), "
            "%s::regclass::oid",
            [LIST.table],
        )
        assert cursor.fetchone() == (started, database, table)


def test_read_asks_every_time_and_fresh_asks_once_within_its_bound():
    per_request, polled = Watcher(LIST), Watcher(LIST, fresh_for=math.inf)
    with CaptureQueriesContext(connection) as queries:
        per_request.read()
        per_request.read()
    assert len(queries) == 2
    with CaptureQueriesContext(connection) as queries:
        first = polled.fresh()
        assert polled.fresh() == first == polled.latest()
    assert len(queries) == 1


def test_fresh_reads_again_past_its_bound_and_sees_the_change():
    watcher = Watcher(LIST, fresh_for=0)
    before = watcher.fresh()
    Category.objects.create(name="Dogs").pets.create(name="Rex")
    after = watcher.fresh()
    assert after.number == before.number + 1 and after.incarnation == before.incarnation
