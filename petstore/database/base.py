"""Django's PostgreSQL backend with a health check that costs no round trip.

Django checks a persistent connection before a request's first query
(CONN_HEALTH_CHECKS) with a `SELECT 1`: a round trip, about a tenth of a list
request's time (docs/decisions/performance.md). A connection the server has
dropped (pg_terminate_backend, a restart, a failover) is told apart without
one: the server sends its FATAL error and closes the socket, so an idle
connection's socket has something to read. Only then is `SELECT 1` asked, which
fails on a dropped connection, and Django opens a new one. A socket with nothing
to read is taken as alive; a peer that vanished without closing (a cut cable)
is not caught here, nor was it by `SELECT 1` (which would hang instead).
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import Error


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        try:
            poller = select.poll()
            poller.register(self.connection.fileno(), select.POLLIN)
            pending = poller.poll(0)
        except (OSError, ValueError, Error):
            return False
        # Something to read on an idle connection: most likely the server's goodbye (or a
        # notice); the real check decides, and reads it.
        return not pending or super().is_usable()
