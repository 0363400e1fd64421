"""The `celery_worker` fixture: a real `celery -A petstore worker` against the test database.

The worker is a separate process, so it sees only committed rows: use it with
`transactional_db` (the fixture asks for it). It needs PostgreSQL and Redis;
without them it skips, or fails under REQUIRE_SERVICES=1, like the markers.
It points the worker at the loopback DNS server (`dns_server`) and the test's
own CA directory, sets a one-second certificate delay, and always stops the
process, killing it if a warm shutdown does not finish.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import REQUIRE_SERVICES, _postgres_missing, _redis_missing

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 60


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.2, what: str = "condition"):
    """Poll until `predicate()` is truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def celery_worker(transactional_db, dns_server, settings, tmp_path):
    problems = [msg for msg in (_postgres_missing(), _redis_missing()) if msg]
    if problems:
        (pytest.fail if REQUIRE_SERVICES else pytest.skip)("celery_worker " + "; ".join(problems))
    settings.DOMAINS_CERT_ISSUE_DELAY = 1.0
    env = os.environ.copy()
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "petstore.settings",
            "DATABASE_URL": _database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "SECRET_KEY": settings.SECRET_KEY,
            "PLATFORM_DOMAIN": settings.PLATFORM_DOMAIN,
            "PLATFORM_CNAME_TARGET": settings.PLATFORM_CNAME_TARGET,
            "DOMAINS_DNS_NAMESERVERS": ",".join(settings.DOMAINS_DNS_NAMESERVERS),
            "DOMAINS_DNS_TIMEOUT": str(settings.DOMAINS_DNS_TIMEOUT),
            "DOMAINS_DNS_LIFETIME": str(settings.DOMAINS_DNS_LIFETIME),
            "DOMAINS_CA_IDENTIFIER": settings.DOMAINS_CA_IDENTIFIER,
            "DOMAINS_CA_DIR": str(settings.DOMAINS_CA_DIR),
            "DOMAINS_CERT_ISSUE_DELAY": str(settings.DOMAINS_CERT_ISSUE_DELAY),
            "DOMAINS_VERIFY_WINDOW": str(settings.DOMAINS_VERIFY_WINDOW),
            "DB_CONN_MAX_AGE": "0",
        }
    )
    log_path = tmp_path / "celery-worker.log"
    command = [
        sys.executable, "-m", "celery", "-A", "petstore", "worker",
        "--pool", "solo", "--without-gossip", "--without-mingle", "--without-heartbeat",
        "--purge", "--loglevel", "INFO", "-n", f"domains-test-{os.getpid()}@%h",
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_for(
            lambda: process.poll() is not None or b" ready." in log_path.read_bytes(),
            timeout=READY_TIMEOUT,
            what="the celery worker to be ready",
        )
        if process.poll() is not None:
            pytest.fail("celery worker exited:\n" + log_path.read_text(errors="replace")[-4000:])
        process.log_path = log_path
        yield process
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
