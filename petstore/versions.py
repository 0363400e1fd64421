"""Version numbers the database raises whenever certain rows change.

A version is declared as data (`Version`: its one-row table and the `Watch`es of the tables
it follows), and everything else is made from that declaration: the trigger function, the
triggers and their names, the statements a migration runs, the check that they are all
there. Every write path, the ORM's, a bulk update's, raw SQL's or a cascade's, raises the
number; nothing that writes those rows can forget to. A process may then keep what it read
from the rows for as long as the number stays the same. The triggers are deferred
constraint triggers, so the number moves when the writing transaction commits, in the same
commit as the rows: a reader that sees the new number sees the new rows. A watched table's
TRUNCATE raises it too. The function names its table with the schema the migration ran in,
under a pinned search_path, so a writer whose search_path shows another same-named table
still raises this one. A trigger dropped by hand, disabled, or lost with a table a migration
remakes would leave the number still: `missing_triggers` finds it.

A declaration changes only with a migration that replaces the triggers (`replacing`): the
migration holds its own copy of the declaration, as history, and a test holds the app's
equal to the latest one.

A version's row is locked from its trigger to the commit, and Django's foreign keys are
checked at commit too (they are deferred), possibly after it: so a row that code locks to
serialise work on it (`select_for_update`) is locked FOR NO KEY UPDATE (`no_key=True`), which
lets those checks through. A plain FOR UPDATE would make a committing writer that holds the
version wait on it, while the lock's holder waits for the version at its own commit: a
deadlock (tests/domains/edge/test_version.py).

The version tables are no models: Django's test flush would truncate them, and a number
that starts again at 0 could return to a value a process already holds.

A number alone can come back, though, for other rows: a failover to a replica that had not
received the last commits, a backup restored (into a new database on the same server, or
under a new server) and written again. So a process keys what it keeps by a `Stamp`: the
number with the database's incarnation, read in the same statement (a pooler may change the
server between two statements). The incarnation is:

- the server's start (`pg_postmaster_start_time()`): a promoted replica is another server
  with its own start, and so is a physical backup restored and started, or a new cluster. A
  plain restart changes it too, which costs a process one read of what it keeps, nothing more;
- the database's OID: a dump restored into a new database on the same running server, or a
  database made from another as a template, has the server's start and system identifier
  but a new OID;
- the version table's OID (`tableoid`, free with the row): a dump restored over the same
  database (pg_restore --clean) drops and makes the table again.

Left out: the cluster's `system_identifier`, the same on a replica and on a physical backup
and, for another cluster, redundant with the server's start; it is read from pg_control on
disk at each call (about 10 µs, on every read of a version). A random token stored
in the table: a dump carries it over. What none of these sees: a server that crashes and
recovers without restarting the postmaster loses no commit a reader saw, unless a writer
ran with `synchronous_commit = off` (none of ours does).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection, migrations

logger = logging.getLogger(__name__)

_EVENTS = {"INSERT": "i", "UPDATE": "u", "DELETE": "d"}
_MAX_NAME = 63  # PostgreSQL's identifiers, in bytes


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Trigger(NamedTuple):
    name: str
    table: str


@dataclass(frozen=True)
class Watch:
    """The writes to `table` that raise the version. `events`: "INSERT", "UPDATE", "DELETE"
    joined by " OR ". `columns` (an UPDATE alone): only an update that changes one of them
    (UPDATE OF them, and only when a value differs, since Django's `save()` writes every
    column). `when`: any other condition on OLD and NEW."""

    table: str
    events: str
    columns: tuple[str, ...] = ()
    when: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.event_list) - set(_EVENTS)
        if unknown or not self.event_list:
            raise ValueError(f"{self.table}: {self.events!r}: INSERT, UPDATE or DELETE only")
        if self.columns and self.event_list != ("UPDATE",):
            raise ValueError(f"{self.table}: columns are for an UPDATE alone")
        object.__setattr__(self, "columns", tuple(self.columns))

    @property
    def event_list(self) -> tuple[str, ...]:
        return tuple(event.strip().upper() for event in self.events.split(" OR "))

    @property
    def slug(self) -> str:
        return "".join(_EVENTS.get(event, "?") for event in self.event_list)

    def condition(self) -> str:
        changed = [f"OLD.{_quoted(c)} IS DISTINCT FROM NEW.{_quoted(c)}" for c in self.columns]
        parts = [f"({part})" for part in (" OR ".join(changed), self.when) if part]
        return " AND ".join(parts)


@dataclass(frozen=True)
class Version:
    """A version: its one-row table (`id = 1`, `version`, `bumped_by`) and what raises it."""

    table: str
    watches: Sequence[Watch] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "watches", tuple(self.watches))
        names = [trigger.name for trigger in self.triggers()]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.table}: two watches of one table with the same events")
        if too_long := [name for name in [*names, self.function] if len(name) > _MAX_NAME]:
            raise ValueError(f"{self.table}: names longer than {_MAX_NAME}: {too_long}")

    # --- What the declaration makes ---------------------------------------------------

    @property
    def function(self) -> str:
        return f"{self.table}_bump"

    def _row_trigger(self, watch: Watch) -> Trigger:
        return Trigger(f"{self.table}__{watch.table}__{watch.slug}", watch.table)

    def _truncate_triggers(self) -> list[Trigger]:
        tables = dict.fromkeys(watch.table for watch in self.watches)  # in declared order
        return [Trigger(f"{self.table}__{table}__t", table) for table in tables]

    def triggers(self) -> list[Trigger]:
        """Every trigger the declaration makes, by name and table."""
        return [*(self._row_trigger(watch) for watch in self.watches), *self._truncate_triggers()]

    def create_statements(self, schema: str) -> list[str]:
        """The function and triggers, every name in `schema` (the migration's)."""
        qualified = f"{_quoted(schema)}.{_quoted(self.table)}"
        function = f"{_quoted(schema)}.{_quoted(self.function)}"
        statements = [
            # Once per transaction: a row updated again in the transaction that updated it
            # leaves one more version of it to step over each time (a bulk update of 10,000
            # domains' states: 4.3 s without this, 0.5 s with it).
            f"""
            CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql
            SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
                UPDATE {qualified}
                SET version = version + 1, bumped_by = pg_current_xact_id()
                WHERE id = 1 AND bumped_by IS DISTINCT FROM pg_current_xact_id();
                RETURN NULL;
            END
            $$"""  # noqa: S608 (names from the declaration, quoted)
        ]
        for watch in self.watches:
            name, table = self._row_trigger(watch)
            events = " OR ".join(
                f"UPDATE OF {', '.join(map(_quoted, watch.columns))}"
                if event == "UPDATE" and watch.columns
                else event
                for event in watch.event_list
            )
            condition = watch.condition()
            statements.append(
                f"""
                CREATE CONSTRAINT TRIGGER {_quoted(name)}
                AFTER {events} ON {_quoted(schema)}.{_quoted(table)}
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
                {f"WHEN ({condition})" if condition else ""}
                EXECUTE FUNCTION {function}()"""
            )
        statements += [
            f"""
            CREATE TRIGGER {_quoted(name)} AFTER TRUNCATE ON {_quoted(schema)}.{_quoted(table)}
            FOR EACH STATEMENT EXECUTE FUNCTION {function}()"""
            for name, table in self._truncate_triggers()
        ]
        return statements

    def drop_statements(self, schema: str) -> list[str]:
        return [
            *(
                f"DROP TRIGGER {_quoted(name)} ON {_quoted(schema)}.{_quoted(table)}"
                for name, table in reversed(self.triggers())
            ),
            f"DROP FUNCTION {_quoted(schema)}.{_quoted(self.function)}()",
        ]

    # --- Reads -----------------------------------------------------------------------

    def read(self) -> Stamp:
        """The version now, with the database's incarnation (one statement: an indexed read
        of a one-row table, and pg_database's row by name)."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT v.version, pg_postmaster_start_time(), d.oid, v.tableoid "  # noqa: S608 (a constant)
                f"FROM {self.table} v, pg_database d "
                "WHERE v.id = 1 AND d.datname = current_database()"
            )
            row = cursor.fetchone()
        if row is None:
            raise LookupError(f"{self.table} has no row: run `manage.py migrate`")
        number, started, database, table = row
        return Stamp(int(number), (started, int(database), int(table)))


class Stamp(NamedTuple):
    """A version as a process keys what it keeps: the number, and the database's incarnation
    (the server's start, the database's OID, the version table's OID: the module's docstring
    says why). Two stamps are equal only for the same rows."""

    number: int
    incarnation: tuple[datetime, int, int]


def missing_triggers(version: Version) -> list[str]:
    """The version's triggers this database lacks: not on their table (as this connection
    names it), disabled, or not calling the version's function. Empty when all are there.

    Enabled means "O" or "A": a trigger made ENABLE REPLICA fires only in sessions whose
    session_replication_role is replica, which no writer of ours is."""
    triggers = version.triggers()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT e.name
            FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS e(name, tbl, n)
            WHERE NOT EXISTS (
                SELECT 1 FROM pg_trigger t
                WHERE t.tgname = e.name
                  AND t.tgrelid = to_regclass(e.tbl)
                  AND t.tgfoid = to_regprocedure(%s)
                  AND t.tgenabled IN ('O', 'A')
            )
            ORDER BY e.n""",
            [
                [trigger.name for trigger in triggers],
                [_quoted(trigger.table) for trigger in triggers],
                f"{_quoted(version.function)}()",
            ],
        )
        return [name for (name,) in cursor.fetchall()]


class Watcher:
    """One process's reads of a version, under either of two contracts:

    - `read()`: now, for a reader that must see every change committed before it began;
    - `fresh()`: the stamp read less than `fresh_for` seconds ago, read now past that; with
      `keep_fresh`, a thread reads it on a beat, so a change committed at t is seen from
      t + `fresh_for` at the latest, and usually within a beat (the edge's cache).

    `latest()` is the newest stamp read (by start), which a keeper checks after reading its
    rows: a read that overlapped a change is then not kept."""

    def __init__(self, version: Version, *, fresh_for: float = 0.0) -> None:
        self.version = version
        self.fresh_for = fresh_for
        self._lock = threading.Lock()  # the newest read
        self._reading = threading.Lock()  # one `fresh()` read at a time
        self._newest: tuple[float, Stamp] | None = None  # (time.monotonic() at its start, it)
        self._poller_pid: int | None = None

    def read(self) -> Stamp:
        started = time.monotonic()
        stamp = self.version.read()
        with self._lock:
            if self._newest is None or started >= self._newest[0]:
                self._newest = (started, stamp)
        return stamp

    def latest(self) -> Stamp | None:
        newest = self._newest
        return None if newest is None else newest[1]

    def _fresh(self) -> Stamp | None:
        newest = self._newest
        if newest is None or time.monotonic() - newest[0] >= self.fresh_for:
            return None
        return newest[1]

    def fresh(self) -> Stamp:
        stamp = self._fresh()
        if stamp is None:
            with self._reading:  # a read under way: wait for it rather than start another
                stamp = self._fresh() or self.read()
        return stamp

    def keep_fresh(self, every: float, *, also: Callable[[], object] = lambda: None) -> None:
        """Start this process's thread, once (a forked process starts its own): every `every`
        seconds it runs `also`, then reads the version."""
        pid = os.getpid()
        with self._lock:
            if self._poller_pid == pid:
                return
            self._poller_pid = pid
        name = f"{self.version.table}-watcher"
        threading.Thread(target=self._poll, args=(every, also), name=name, daemon=True).start()

    def _poll(self, every: float, also: Callable[[], object]) -> None:
        failing = False
        while True:
            started = time.monotonic()
            try:
                also()
                self.read()
                failing = False
            except Exception:
                # Readers then read the version themselves, and fail as the database does.
                if not failing:
                    logger.exception("%s could not be read", self.version.table)
                failing = True
                with contextlib.suppress(Exception):
                    connection.close()  # this thread's own; a new one at the next beat
            time.sleep(max(0.0, every - (time.monotonic() - started)))


# --- Migrations -------------------------------------------------------------------------


def _schema(schema_editor: Any) -> str:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        return cursor.fetchone()[0]


def replacing(
    version: Version, *, old_create: Sequence[str], old_drop: Sequence[str]
) -> migrations.RunPython:
    """The operation that replaces a version's function and triggers (made by `old_create`,
    removed by `old_drop`) with those of `version`, in the schema the migration runs in;
    backwards, the reverse. The table and its row stay."""

    def run(schema_editor: Any, statements: Sequence[str]) -> None:
        for statement in statements:
            schema_editor.execute(statement, params=None)

    def forwards(apps: Any, schema_editor: Any) -> None:
        run(schema_editor, [*old_drop, *version.create_statements(_schema(schema_editor))])

    def backwards(apps: Any, schema_editor: Any) -> None:
        run(schema_editor, [*version.drop_statements(_schema(schema_editor)), *old_create])

    return migrations.RunPython(forwards, backwards)


def migration(
    table: str, *, create: Mapping[str, Sequence[str]], drop: Mapping[str, Sequence[str]]
) -> migrations.RunPython:
    """The operation of the first version migrations (pets 0004, domains 0010, frozen): the
    table, then `create[vendor]` (the first row, hand-written triggers); backwards,
    `drop[vendor]`, then the table. Only "postgresql" runs: the settings refuse any other
    database."""

    def statements(schema_editor: Any, by_vendor: Mapping[str, Sequence[str]]) -> Sequence[str]:
        vendor = schema_editor.connection.vendor
        if vendor not in by_vendor:
            raise NotImplementedError(f"{table} has no triggers for {vendor}")
        return by_vendor[vendor]

    def forwards(apps: Any, schema_editor: Any) -> None:
        for statement in statements(schema_editor, create):
            schema_editor.execute(statement, params=None)

    def backwards(apps: Any, schema_editor: Any) -> None:
        for statement in [*statements(schema_editor, drop), f"DROP TABLE {table}"]:
            schema_editor.execute(statement, params=None)

    return migrations.RunPython(forwards, backwards)
