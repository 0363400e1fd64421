"""The benchmarks' own database and environment: PostgreSQL `bench`, Redis 8/9,
production settings with the rate limits off (they would cap the load itself)."""

from __future__ import annotations

import os

import psycopg

PG_ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("BENCH_DB", "bench")

ENV = {
    **os.environ,
    "DJANGO_SETTINGS_MODULE": "bench.settings",
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
    "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8"),
    "CELERY_BROKER_URL": os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/9"),
    "SECRET_KEY": "bench-only-not-secret",
    "DOMAINS_KEY_ENCRYPTION_KEY": "bench-only-not-secret-either",
    "DEBUG": "0",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "0",
    "DB_CONN_MAX_AGE": "600",
    "LOG_LEVEL": "WARNING",
    # The rate limit would cap the load itself; the benchmark measures the code path.
    "API_RATE_LIMIT": "",
    "API_ADDRESS_RATE_LIMIT": "",
}


def create_database() -> None:
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB_NAME,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
