"""The tests' database backend: production's (petstore.database), with a faster flush.

A transactional test ends with Django's `flush`, which PostgreSQL's backend writes as one
`TRUNCATE` of every table. TRUNCATE gives each table, index and TOAST table a new file, so
its cost grows with the number of relations, not of rows; a `DELETE FROM` each table costs
next to nothing on the few rows a test leaves (the measurement: docs/decisions/platform.md,
"The suite's time"). Hundreds of transactional tests end with one.

The DELETEs run with `session_replication_role = replica`, so no trigger and no foreign key
check fires, as none fires for a TRUNCATE's rows (the audit log's append-only trigger would
refuse them; the edge version's trigger would write a version for each). That role is a
superuser's: on a server where the tests' role is not one, or for a flush that resets the
sequences or cascades, the flush is Django's own. `tests/database/test_flush.py` holds both
to the same tables left, all empty.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.postgresql.operations import DatabaseOperations

from petstore.database import base

REPLICA = "SET LOCAL session_replication_role = replica"


def is_superuser(connection: BaseDatabaseWrapper) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('is_superuser') = 'on'")
        row = cursor.fetchone()
    return bool(row and row[0])


class FlushByDelete(DatabaseOperations):
    def sql_flush(
        self,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or allow_cascade or not tables or not is_superuser(self.connection):
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [REPLICA] + [f"DELETE FROM {self.quote_name(table)}" for table in tables]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = FlushByDelete
