"""The `celery_worker` fixture: a real `celery -A petstore worker` against the test database.

The worker is a separate process, so it sees only committed rows: use it with
`transactional_db` (the fixture asks for it). It needs PostgreSQL and Redis;
without them it skips, or fails under REQUIRE_SERVICES=1, like the markers.
It points the worker at the loopback DNS server (`dns_server`) and the test's
own CA directory, sets a one-second certificate delay, and always stops the
process, killing it if a warm shutdown does not finish.
"""

from __future__ import annotations

import pytest

from tests.conftest import REQUIRE_SERVICES, _postgres_missing, _redis_missing
from tests.processes import Worker, service_env


@pytest.fixture
def celery_worker(transactional_db, dns_server, settings, tmp_path):
    problems = [msg for msg in (_postgres_missing(), _redis_missing()) if msg]
    if problems:
        (pytest.fail if REQUIRE_SERVICES else pytest.skip)("celery_worker " + "; ".join(problems))
    settings.DOMAINS_CERT_ISSUE_DELAY = 1.0
    worker = Worker(
        service_env(settings, DB_CONN_MAX_AGE="0"), tmp_path, "domains-test",
        pool="solo", purge=True,
    )  # fmt: skip
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()
