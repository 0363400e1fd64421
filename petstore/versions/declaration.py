"""A version's declaration (`Version`: its one-row table and the `Watch`es of the tables it
follows), the function and triggers it makes, its read with the database's incarnation
(`Stamp`), and the check that its triggers are all there (petstore/versions/__init__.py says
why each is so)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from django.db import connection

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
