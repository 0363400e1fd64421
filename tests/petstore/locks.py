"""A table another session holds, so that this session's statements on it are cancelled
after `lock_timeout`: PostgreSQL's own refusal, as a statement past statement_timeout or the
connection of a restart or a failover gets it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django.db import connection
from django.db.models import Model


@contextmanager
def locked_elsewhere(model: type[Model] | str, lock_timeout: str = "200ms") -> Iterator[None]:
    """`model`'s table (or the table of that name) held by another session meanwhile."""
    table = model if isinstance(model, str) else model._meta.db_table
    given = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = %s", [lock_timeout])
    try:
        with psycopg.connect(
            dbname=given["NAME"], user=given["USER"], host=given["HOST"], port=given["PORT"]
        ) as other:
            other.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
