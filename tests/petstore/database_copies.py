"""A copy of the test database as it is now, for tests of what a process sees when its
database is replaced under it by an older state of itself: a restore from a backup, or a
failover to a replica that had not received the last commits.

`CREATE DATABASE ... TEMPLATE` copies the files: the copy has the same rows, the same table
OIDs and the same server, only the database's OID differs, which is what a dump restored
into a new database on the same server keeps too (and less than a failover or a new cluster
changes: the server's start as well).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import psycopg
from django.db import connection

from tests.processes import database_url


def _admin(statement: str) -> None:
    """`statement` on the server's "postgres" database, outside any transaction."""
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        admin.execute(statement.encode())


@contextlib.contextmanager
def older_copy() -> Iterator[str]:
    """The name of a copy of the test database as it is when this is entered; dropped on
    exit. Copying needs no one else connected to the source: this thread's connection is
    closed first (a server stopped by the test before may take a moment to let go)."""
    source = connection.settings_dict["NAME"]
    copy = f"{source}_older"
    connection.close()
    _admin(f'DROP DATABASE IF EXISTS "{copy}"')
    for attempt in range(50):
        try:
            _admin(f'CREATE DATABASE "{copy}" TEMPLATE "{source}"')
            break
        except psycopg.OperationalError:  # "source database is being accessed by other users"
            if attempt == 49:
                raise
            time.sleep(0.1)
    try:
        yield copy
    finally:
        connection.close()
        _admin(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')


@contextlib.contextmanager
def connected_to(name: str) -> Iterator[None]:
    """This process's connection on database `name`, as after a restore or a failover that
    kept the connection settings: the next query opens a connection there."""
    settings_dict = connection.settings_dict
    former = settings_dict["NAME"]
    connection.close()
    settings_dict["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        settings_dict["NAME"] = former
