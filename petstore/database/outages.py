"""A write that must outlast a brief database outage (a restart, a crash's recovery): asked
again on a new connection until it succeeds or its time is up.

For a write that records what was done outside the database and cannot be done again: an
ACME order the CA has placed is known only by the URL in its answer, so a failed write would
leave an order the platform never finishes (its next run places another). Inside a
transaction nothing can be asked again, so the error goes up at once there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections

T = TypeVar("T")

# The pause after the first failure, doubled after each one up to the longest.
FIRST_PAUSE = 0.1
LONGEST_PAUSE = 2.0


def outlasting_outages(
    write: Callable[[], T], *, within: float, using: str = DEFAULT_DB_ALIAS
) -> T:
    """`write()`'s result. While the database cannot be reached, `write()` is asked again on a
    new connection, for `within` seconds at most; then the last error goes up."""
    connection = connections[using]
    deadline = time.monotonic() + within
    pause = FIRST_PAUSE
    while True:
        try:
            return write()
        except (OperationalError, InterfaceError):
            if connection.in_atomic_block or time.monotonic() + pause > deadline:
                raise
        connection.close()
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
