"""The migration linter (devtools/migrationlint.py) refuses what a rolling deploy cannot take,
and the base migration (petstore/database/migrations.py) gives every migration its lock
timeout in the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection, migrations
from django.db.migrations.state import ProjectState

from devtools import migrationlint
from petstore.database.migrations import LOCK_TIMEOUT, LockTimeoutMigration


def lint(tmp_path: Path, sql: str, *, in_transaction: bool = True) -> set[str]:
    path = tmp_path / "app.0002_change.sql"
    path.write_text(sql)
    found = migrationlint.squawk_findings({"app.0002_change": path}, in_transaction=in_transaction)
    return {rule for rule, _ in found.get("app.0002_change", [])}


def test_an_index_built_in_place_without_a_lock_timeout_is_refused(tmp_path):
    rules = lint(tmp_path, 'CREATE INDEX "pets_pet_name" ON "pets_pet" ("name");\n')
    assert {"require-concurrent-index-creation", "require-lock-timeout"} <= rules


def test_a_not_null_column_without_a_database_default_is_refused(tmp_path):
    sql = "SET LOCAL lock_timeout = '5s';\nALTER TABLE pets_pet ADD COLUMN colour text NOT NULL;\n"
    assert "adding-required-field" in lint(tmp_path, sql)


def test_the_base_migrations_statements_lint_clean(tmp_path):
    atomic = (
        "SET LOCAL lock_timeout = '5s';\n"
        "ALTER TABLE pets_pet ADD COLUMN colour text NOT NULL DEFAULT '';\n"
    )
    concurrent = (
        "SET lock_timeout = '5s';\n"
        'CREATE INDEX CONCURRENTLY "pets_pet_colour" ON "pets_pet" ("colour");\n'
        "RESET lock_timeout;\n"
    )
    assert lint(tmp_path, atomic) == set()
    assert lint(tmp_path, concurrent, in_transaction=False) == set()


def test_a_warning_fails_unless_its_migration_is_accepted_for_that_rule():
    accepted, (rules, _) = next(iter(migrationlint.ACCEPTED.items()))
    found = {
        key: [(rule, f"line 1: {rule}: ...") for rule in rules]
        for key, (rules, _) in migrationlint.ACCEPTED.items()
    }
    assert migrationlint.problems(found) == []
    found[accepted].append(("ban-drop-column", "line 9: ban-drop-column: ..."))
    found["domains.0099_new"] = [("require-lock-timeout", "line 1: require-lock-timeout: ...")]
    assert migrationlint.problems(found) == [
        f"{accepted}: line 9: ban-drop-column: ...",
        "domains.0099_new: line 1: require-lock-timeout: ...",
    ]


def test_an_accepted_rule_that_no_longer_fires_is_reported_stale():
    stale = migrationlint.problems({})
    assert len(stale) == sum(len(rules) for rules, _ in migrationlint.ACCEPTED.values())
    assert all("no longer fires" in line for line in stale)


def test_every_accepted_migration_gives_its_reason():
    assert all(reason.strip() for _, reason in migrationlint.ACCEPTED.values())


class Atomic(LockTimeoutMigration):
    operations = [migrations.RunSQL("SELECT 1", "SELECT 1")]


class Concurrent(LockTimeoutMigration):
    atomic = False
    operations = [migrations.RunSQL("SELECT 1", "SELECT 1")]


def lock_timeout_after(operations) -> list[str]:
    seen = []
    with connection.schema_editor(atomic=False) as editor:
        for operation in operations:
            operation.database_forwards("pets", editor, ProjectState(), ProjectState())
            with connection.cursor() as cursor:
                cursor.execute("SHOW lock_timeout")
                seen.append(cursor.fetchone()[0])
    return seen


@pytest.mark.django_db
def test_an_atomic_migration_waits_for_its_locks_the_timeout_at_most():
    migration = Atomic("0002_change", "pets")
    assert lock_timeout_after(migration.operations) == [LOCK_TIMEOUT, LOCK_TIMEOUT]


@pytest.mark.django_db(transaction=True)
def test_a_migration_outside_a_transaction_resets_the_timeout_at_its_end():
    migration = Concurrent("0002_change", "pets")
    assert lock_timeout_after(migration.operations) == [LOCK_TIMEOUT, LOCK_TIMEOUT, "0"]
