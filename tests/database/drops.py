"""The test's own database connection ended by the server, as a restart or a failover ends
it: from a second connection, waiting until the backend is gone (so the next query on the
first connection fails, rather than racing the backend's exit)."""

from __future__ import annotations

from django.db import connection, connections


def drop_this_connection() -> None:
    pid = connection.connection.info.backend_pid
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
    finally:
        other.close()
