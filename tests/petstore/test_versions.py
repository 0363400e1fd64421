"""The version primitive (petstore/versions/): a declaration makes its triggers, the
migrations make exactly what the apps declare, a writer's search_path cannot send the raise
elsewhere, a trigger dropped or disabled is missing, and the watcher's two contracts.

Beside the edge's (the one an app declares), a version of the tests' own, on a table of its
own, made by the statements a migration runs: `thing`.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from domains.edge import version as edge_version
from petstore import versions
from petstore.versions import Version, Watch, Watcher

# Committed writes: the version moves when the writing transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

DECLARED = [
    (edge_version.EDGE, "domains.migrations.0030_edge_version_platform_certificate", "EDGE"),
]
THING = Version(
    table="versions_thing_version",
    watches=[Watch("versions_thing", "INSERT OR UPDATE OR DELETE")],
)


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


@pytest.fixture
def thing() -> Iterator[Version]:
    """THING's table, its watched table and its triggers, as a migration makes them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        [schema] = cursor.fetchone()
        cursor.execute("CREATE TABLE versions_thing (id serial PRIMARY KEY, name text NOT NULL)")
        cursor.execute(
            f"CREATE TABLE {THING.table} "
            "(id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL, bumped_by xid8)"
        )
        cursor.execute(f"INSERT INTO {THING.table} (id, version) VALUES (1, 0)")
        for statement in THING.create_statements(schema):
            cursor.execute(statement)
    yield THING
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE versions_thing, {THING.table}")
        cursor.execute(f"DROP FUNCTION {THING.function}()")


def write_a_thing(name: str = "Rex") -> None:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO versions_thing (name) VALUES (%s)", [name])


def current() -> int:
    return THING.read().number


def test_a_writer_with_another_search_path_moves_the_real_version(thing):
    """A schema earlier in the writer's search_path has a table of the version's name: the
    row written is the real one (the writer's path finds no other watched table), and so is
    the version raised."""
    before = current()
    with connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA decoy")
        cursor.execute(f"CREATE TABLE decoy.{thing.table} (LIKE public.{thing.table})")
        cursor.execute(f"INSERT INTO decoy.{thing.table} (id, version) VALUES (1, 0)")
        try:
            cursor.execute("SET search_path = decoy, public")
            cursor.execute("INSERT INTO versions_thing (name) VALUES ('Rex')")
            cursor.execute(f"SELECT version FROM {thing.table}")
            assert cursor.fetchone() == (0,)  # the decoy's, untouched
        finally:
            cursor.execute("RESET search_path")
            cursor.execute("DROP SCHEMA decoy CASCADE")
        cursor.execute("SELECT name FROM versions_thing")
        assert cursor.fetchall() == [("Rex",)]
    assert current() == before + 1


@pytest.mark.parametrize(
    "how",
    [
        "DROP TRIGGER {name} ON {table}",
        "ALTER TABLE {table} DISABLE TRIGGER {name}",
        "ALTER TABLE {table} ENABLE REPLICA TRIGGER {name}",
    ],
    ids=["dropped", "disabled", "replica only"],
)
def test_a_trigger_dropped_or_disabled_is_missing(thing, how):
    assert versions.missing_triggers(thing) == []
    name, table = thing.triggers()[0]
    with pytest.raises(RolledBack), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(how.format(name=name, table=table))
        assert versions.missing_triggers(thing) == [name]
        raise RolledBack
    assert versions.missing_triggers(thing) == []


def test_a_trigger_of_the_name_on_another_table_is_missing(thing):
    name, table = thing.triggers()[0]
    with pytest.raises(RolledBack), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER {name} ON {table}")
            cursor.execute("CREATE TABLE versions_other (id serial PRIMARY KEY)")
            cursor.execute(
                f"CREATE TRIGGER {name} AFTER INSERT ON versions_other "
                f"FOR EACH ROW EXECUTE FUNCTION {thing.function}()"
            )
        assert versions.missing_triggers(thing) == [name]
        raise RolledBack


def test_every_write_path_moves_it_once_per_committed_transaction(thing):
    before = current()
    write_a_thing()
    assert current() == before + 1
    with transaction.atomic():
        write_a_thing("Fido")
        with connection.cursor() as cursor:
            cursor.execute("UPDATE versions_thing SET name = name || '!'")
            cursor.execute("DELETE FROM versions_thing WHERE name = 'Rex!'")
        assert current() == before + 1  # deferred: not before the commit
    assert current() == before + 2
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE versions_thing")
    assert current() == before + 3


def test_a_stamp_is_the_number_with_the_databases_incarnation(thing):
    write_a_thing()
    stamp = thing.read()
    assert stamp.number == 1
    started, database, table = stamp.incarnation
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_postmaster_start_time(), "
            "(SELECT oid FROM pg_database WHERE datname = current_database()), "
            "%s::regclass::oid",
            [thing.table],
        )
        assert cursor.fetchone() == (started, database, table)


def test_read_asks_every_time_and_fresh_asks_once_within_its_bound(thing):
    per_request, polled = Watcher(thing), Watcher(thing, fresh_for=math.inf)
    with CaptureQueriesContext(connection) as queries:
        per_request.read()
        per_request.read()
    assert len(queries) == 2
    with CaptureQueriesContext(connection) as queries:
        first = polled.fresh()
        assert polled.fresh() == first == polled.latest()
    assert len(queries) == 1


def test_fresh_reads_again_past_its_bound_and_sees_the_change(thing):
    watcher = Watcher(thing, fresh_for=0)
    before = watcher.fresh()
    write_a_thing()
    after = watcher.fresh()
    assert after.number == before.number + 1 and after.incarnation == before.incarnation
