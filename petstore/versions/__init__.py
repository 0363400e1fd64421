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

A declaration changes only with a migration that replaces the triggers (`replacing`, then
`superseding` from one declaration to the next): the
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

The package: `declaration.py` (a version's declaration, the DDL it makes, reading it and
checking its triggers), `watcher.py` (one process's reads of a version, and its polling
thread), `operations.py` (the migration operations that make and replace the triggers).
"""

from petstore.versions.declaration import Stamp, Trigger, Version, Watch, missing_triggers
from petstore.versions.operations import migration, replacing, superseding
from petstore.versions.watcher import Watcher

__all__ = [
    "Stamp",
    "Trigger",
    "Version",
    "Watch",
    "Watcher",
    "migration",
    "missing_triggers",
    "replacing",
    "superseding",
]
