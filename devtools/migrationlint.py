"""Every migration of ours linted as PostgreSQL runs it, by squawk (`make lint`).

A rolling deploy migrates under live traffic (docs/decisions/releases.md): a migration must
not hold the tables behind a lock it waits for, nor break the release before's processes.
The statements are the ones `migrate` really sends: each migration of the project's apps is
applied in order to a scratch database on the server DATABASE_URL names (the embedded one
of the tests where it names none), every statement recorded under its migration, and squawk
reads each migration's statements as one file (in a transaction when the migration is
atomic). The migrations production ran before the linter cannot change: `ACCEPTED` names
each with its reason, and an entry whose migration lints clean is stale and fails too.

    python -m devtools.migrationlint
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import django
from django.apps import apps
from django.db import connection
from django.db.migrations import Migration
from django.db.migrations.executor import MigrationExecutor
from psycopg import ClientCursor

from devtools import embedded

# What squawk leaves out, and why: the rules the project decides otherwise, written once.
EXCLUDED_RULES = {
    # A migration that rewrites rows (a backfill) runs as long as it must; what protects the
    # traffic is the lock timeout, which every migration sets (petstore/database/migrations.py).
    "require-statement-timeout": "the lock timeout bounds the wait; the work takes its time",
    # Django records a migration applied in the transaction that applies it: an atomic one
    # that fails leaves nothing to re-run past.
    "prefer-robust-stmts": "an atomic migration fails whole; Django records what it applied",
    # The column types are the models' (Django's IntegerField, CharField, DateTimeField with
    # USE_TZ), chosen there; the linter is here for locks and compatibility.
    "prefer-bigint-over-int": "column types are the models' choice",
    "prefer-bigint-over-smallint": "column types are the models' choice",
    "prefer-identity": "Django's AutoField makes the key column",
    "prefer-text-field": "CharField's max_length is the form's and the API's limit too",
}

# The migrations production ran before every migration was linted (releases 1.0.0 and
# 1.1.0): the history of the schema, which cannot change. Each with the rules it breaks and
# why it stays; a rule accepted here that no longer fires fails the lint as stale.
RAN_IN_1_0_0 = "ran in production with release 1.0.0 or before: history, it cannot change"
RAN_IN_1_1_0 = "ran in production with release 1.1.0: history, it cannot change"
CONTRACT = "the release before's models name none of it: dropped a release after they stopped"
ACCEPTED: dict[str, tuple[set[str], str]] = {
    "apikeys.0004_idempotencyrecord_claim_unused": (
        {"ban-drop-not-null", "require-lock-timeout"},
        RAN_IN_1_0_0,
    ),
    "apikeys.0005_key_hash_index": (
        {"require-concurrent-index-creation", "require-lock-timeout"},
        RAN_IN_1_1_0,
    ),
    "apikeys.0006_idempotencyrecord_claim_contract": (
        {
            "adding-not-nullable-field",
            "ban-drop-constraint",
            "constraint-missing-not-valid",
            "require-lock-timeout",
        },
        RAN_IN_1_1_0,
    ),
    "domains.0001_initial": (
        {"adding-foreign-key-constraint", "adding-required-field", "require-lock-timeout"},
        RAN_IN_1_0_0,
    ),
    "domains.0002_check_requested_at_and_choices": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0003_claims": (
        {
            "ban-drop-constraint",
            "ban-drop-default",
            "constraint-missing-not-valid",
            "disallowed-unique-constraint",
            "require-concurrent-index-creation",
            "require-lock-timeout",
        },
        RAN_IN_1_0_0,
    ),
    "domains.0004_certificate_authorities": (
        {
            "adding-not-nullable-field",
            "ban-drop-default",
            "require-concurrent-index-creation",
            "require-lock-timeout",
        },
        RAN_IN_1_0_0,
    ),
    "domains.0005_cert_state_in_step": (
        {"constraint-missing-not-valid", "require-lock-timeout"},
        RAN_IN_1_0_0,
    ),
    "domains.0006_failing_temporarily_since": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0007_event_rival_project_redirect_pause": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0008_owner_events": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0009_webhooks": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0010_edge_version": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0011_edge_version_generated": (
        {"ban-drop-function", "require-lock-timeout"},
        RAN_IN_1_0_0,
    ),
    "domains.0012_deliveries": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0014_platform_keys": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0016_check_diagnosis": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "domains.0017_proven_domain_project_index": (
        {
            "require-concurrent-index-creation",
            "require-concurrent-index-deletion",
            "require-lock-timeout",
        },
        RAN_IN_1_0_0,
    ),
    "domains.0018_certificate_renewal_info": (
        {"require-concurrent-index-creation", "require-lock-timeout"},
        RAN_IN_1_0_0,
    ),
    "domains.0019_owner_email_changes": ({"require-lock-timeout"}, RAN_IN_1_1_0),
    "domains.0020_outbox_columns_contract": (
        {"require-concurrent-index-deletion", "require-lock-timeout"},
        RAN_IN_1_1_0,
    ),
    "pets.0001_initial": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "pets.0004_list_version": ({"require-lock-timeout"}, RAN_IN_1_0_0),
    "pets.0005_list_version_generated": (
        {"ban-drop-function", "require-lock-timeout"},
        RAN_IN_1_0_0,
    ),
    "pets.0006_list_version_dropped": (
        {"ban-drop-function", "ban-drop-table", "require-lock-timeout"},
        RAN_IN_1_1_0,
    ),
    # The expand step of "a project outlives its first owner's account": 1.1.0's processes
    # always write an owner, and find projects by owner, so a project whose owner account
    # is gone is only missing from 1.1.0's lists while it runs beside this release.
    "domains.0021_members_roles_and_audit": (
        {"ban-drop-not-null"},
        "the owner column becomes optional; the release before never reads a NULL it wrote",
    ),
    # `superseding` drops the edge version's trigger function and makes it again, with its
    # triggers, in the migration's one transaction: no client calls it, and no statement
    # outside the migration sees it missing.
    "domains.0030_edge_version_platform_certificate": (
        {"ban-drop-function"},
        "a trigger's function, dropped and made again with its triggers in one transaction",
    ),
    # The contract step of a rolling deploy: what the models stopped naming a release ago
    # leaves the database, so the release before, which runs beside this one, never reads it.
    "domains.0032_outbox_columns_dropped": ({"ban-drop-column", "ban-drop-table"}, CONTRACT),
    "apikeys.0009_idempotencyrecord_claim_dropped": ({"ban-drop-column"}, CONTRACT),
}

PROJECT_PACKAGES = ("petstore", "pets", "domains", "devtools")
SCRATCH_SUFFIX = "_migrationlint"


@contextmanager
def scratch_database() -> Iterator[None]:
    """Django's default connection on an empty database of its own, dropped at the end."""
    name = f"{connection.settings_dict['NAME']}{SCRATCH_SUFFIX}"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    main = connection.settings_dict["NAME"]
    connection.settings_dict["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = main
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.close()


def ours(app_label: str) -> bool:
    module = apps.get_app_config(app_label).module
    return module is not None and module.__name__.split(".")[0] in PROJECT_PACKAGES


def applied_statements() -> tuple[dict[str, list[str]], dict[str, bool]]:
    """Every migration's statements as `migrate` sends them, by `app.name`, and whether each
    is atomic; the scratch database is migrated from empty."""
    statements: dict[str, list[str]] = defaultdict(list)
    atomic: dict[str, bool] = {}
    current: list[str] = []

    def progress(
        action: str, migration: Migration | None = None, fake: bool | None = None, /
    ) -> None:
        if action == "apply_start" and migration is not None:
            key = f"{migration.app_label}.{migration.name}"
            current[:] = [key]
            atomic[key] = migration.atomic
        elif action == "apply_success":
            current.clear()

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if current:
            values = params[0] if many and params else params
            # The statement as the server runs it, its parameters quoted in (psycopg's
            # client-side binding), so squawk reads plain SQL.
            composed = ClientCursor(connection.connection).mogrify(sql, values or None)
            statements[current[0]].append(composed)
        return execute(sql, params, many, context)

    with scratch_database(), connection.execute_wrapper(record):
        executor = MigrationExecutor(connection, progress)
        executor.migrate(executor.loader.graph.leaf_nodes())
    kept = {key: sql for key, sql in statements.items() if ours(key.split(".")[0])}
    return kept, {key: atomic[key] for key in kept}


Finding = tuple[str, str]  # (rule, the line that says where and what)


def squawk_findings(files: dict[str, Path], *, in_transaction: bool) -> dict[str, list[Finding]]:
    """squawk's warnings for each file, by migration."""
    if not files:
        return {}
    squawk = shutil.which("squawk", path=str(Path(sys.executable).parent)) or "squawk"
    command = [squawk, "--reporter", "json", "--pg-version", "15"]
    command += ["--exclude", ",".join(EXCLUDED_RULES)]
    if in_transaction:
        command.append("--assume-in-transaction")
    run = subprocess.run(  # noqa: S603 (our own arguments)
        [*command, *map(str, files.values())], capture_output=True, text=True, check=False
    )
    if run.returncode not in (0, 1) or not run.stdout.strip():
        raise SystemExit(f"squawk failed ({run.returncode}): {run.stderr.strip()}")
    by_file = {str(path): key for key, path in files.items()}
    found: dict[str, list[Finding]] = defaultdict(list)
    for item in json.loads(run.stdout):
        rule = item["rule_name"]
        line = f"line {item['line'] + 1}: {rule}: {item['message']}"
        found[by_file[item["file"]]].append((rule, line))
    return found


def findings() -> dict[str, list[Finding]]:
    statements, atomic = applied_statements()
    found: dict[str, list[Finding]] = {}
    with tempfile.TemporaryDirectory(prefix="migrationlint-") as folder:
        files = {}
        for key, sql in statements.items():
            path = Path(folder) / f"{key}.sql"
            path.write_text("".join(f"{statement.rstrip().rstrip(';')};\n" for statement in sql))
            files[key] = path
        for in_transaction in (True, False):
            chosen = {key: path for key, path in files.items() if atomic[key] is in_transaction}
            found.update(squawk_findings(chosen, in_transaction=in_transaction))
    return found


def problems(found: dict[str, list[Finding]]) -> list[str]:
    """What fails the lint: each warning whose rule its migration is not accepted for, and
    each accepted rule that no longer fires (its entry is stale)."""
    lines = [
        f"{key}: {line}"
        for key, warnings in sorted(found.items())
        for rule, line in warnings
        if rule not in ACCEPTED.get(key, (set(), ""))[0]
    ]
    for key, (rules, _) in sorted(ACCEPTED.items()):
        fired = {rule for rule, _ in found.get(key, [])}
        lines += [
            f"{key}: {rule} is accepted in devtools/migrationlint.py and no longer fires: remove it"
            for rule in sorted(rules - fired)
        ]
    return lines


def main(argv: Sequence[str] = ()) -> int:
    if not os.environ.get("DATABASE_URL"):
        started = embedded.start_for_tests(os.environ)
        # The embedded cluster has only its maintenance database; the scratch one is made
        # from there.
        url = started.get("DATABASE_URL", "")
        started["DATABASE_URL"] = url.rpartition("/")[0] + "/postgres" if url else url
        os.environ.update({name: value for name, value in started.items() if value})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")

    django.setup()
    found = problems(findings())
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} migration problem(s): see docs/operators/rollback.md, "
            "'What a migration may do'"
        )
        return 1
    print("migrations: every one lints clean or is accepted")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
