"""Migrations that never hold the traffic up behind a lock they wait for.

An ALTER TABLE waits for every transaction that touched the table to end, and every query
after it waits behind the ALTER: one long report freezes the table for all. So each
migration first says how long it waits for a lock (`LOCK_TIMEOUT`); past that it fails,
nothing changed, and the release runs again (docs/operators/rollback.md). A migration of the
apps subclasses `LockTimeoutMigration` below instead of Django's, and the linter
(devtools/migrationlint.py) refuses one that takes a lock without the timeout.

An atomic migration sets the timeout for its own transaction (`SET LOCAL`); one that is not
(an index built concurrently cannot run in a transaction) sets it for the connection and
resets it at its end, so the migrations after it keep their own.
"""

from __future__ import annotations

from typing import cast

from django.db import migrations
from django.db.migrations.operations.base import Operation

# Long enough for a lock behind the API's short transactions, short enough that the queue
# behind a waiting ALTER clears before clients time out.
LOCK_TIMEOUT = "5s"


def set_lock_timeout(*, atomic: bool) -> migrations.RunSQL:
    statement = f"SET {'LOCAL ' if atomic else ''}lock_timeout = '{LOCK_TIMEOUT}'"
    # Both ways: a migration reversed waits for its locks no longer than forwards.
    return migrations.RunSQL(statement, statement)


def reset_lock_timeout() -> migrations.RunSQL:
    return migrations.RunSQL("RESET lock_timeout", f"SET lock_timeout = '{LOCK_TIMEOUT}'")


class LockTimeoutMigration(migrations.Migration):
    """Django's migration, its operations preceded by the lock timeout (and, outside a
    transaction, followed by its reset: reversed, the reset sets it first)."""

    def __init__(self, name: str, app_label: str) -> None:
        super().__init__(name, app_label)
        # The instance's own list (Django's __init__ copies the class's), changed in place.
        operations = cast(list[Operation], self.operations)
        operations.insert(0, set_lock_timeout(atomic=self.atomic))
        if not self.atomic:
            operations.append(reset_lock_timeout())
