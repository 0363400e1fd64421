"""The benchmarks' own database and environment: PostgreSQL `bench`, Redis 8/9,
production settings with the rate limits off (they would cap the load itself)."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
from pathlib import Path

import psycopg
import redis

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("BENCH_DB", "bench")

ENV = {
    **os.environ,
    "DJANGO_SETTINGS_MODULE": "bench.settings",
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
    "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8"),
    "CELERY_BROKER_URL": os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/9"),
    "SECRET_KEY": "bench-only-not-secret",
    "DOMAINS_KEY_ENCRYPTION_KEY": "OG9MLc5UUcLTqnjzzC8Om8ozyXFzcD_UcbJeCiP2Av8",  # not secret
    "DEBUG": "0",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "0",
    "DB_CONN_MAX_AGE": "600",
    "LOG_LEVEL": "WARNING",
    # The rate limit would cap the load itself; the benchmark measures the code path.
    "API_RATE_LIMIT": "",
    "API_ADDRESS_RATE_LIMIT": "",
    # So are a project's hourly Add and Verify limits (a benchmark adds and verifies many).
    "DOMAINS_ADD_PER_HOUR": "1000000",
    "DOMAINS_VERIFY_PER_HOUR": "1000000",
    # Its names live in `.test` zones served on loopback, as `make run`'s do.
    "DOMAINS_LOCAL_SUFFIXES": "test",
    "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8,::1",
}


def create_database() -> None:
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB_NAME,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')


@contextlib.contextmanager
def exclusive(env: dict):
    """One benchmark with a Celery worker at a time on this database and broker (`make bench`
    and a run started by hand would share their projects and the queue, which each purges):
    a PostgreSQL advisory lock."""
    with psycopg.connect(env["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(hashtext('bench.worker'))")
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('bench.worker'))")


def setup_django(env: dict) -> None:
    """Django in this process, on the benchmark's settings (once, however often asked)."""
    os.environ.update(env)
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()


def migrate(env: dict) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
        capture_output=True,
    )  # fmt: skip


def machine() -> str:
    """CPU model, cores, memory and the server versions, for the report."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")), platform.processor() or "unknown CPU",
    )  # fmt: skip
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    with psycopg.connect(ENV["DATABASE_URL"]) as conn:
        pg = conn.execute("SHOW server_version").fetchone()[0]
    redis_version = redis.Redis.from_url(ENV["REDIS_URL"]).info("server")["redis_version"]
    return (
        f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GiB, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, PostgreSQL {pg}, "
        f"Redis {redis_version}"
    )
