"""A backup of the platform's database: `pg_dump --format=custom` of DATABASE_URL to a file.

The database is half of a backup; the other half is DOMAINS_KEY_ENCRYPTION_KEY, which
seals every certificate's private key in it (docs/operators/backups.md). The dump is written
beside the target under a temporary name and linked to the target's name only once
pg_dump has succeeded, so a target that exists is always a whole backup, and an
existing file is never overwritten (the link fails instead).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from django.db import connection


class BackupError(Exception):
    """The backup was not written; the message says why, in one line."""


def find_pg_dump(given: str | None) -> str:
    """`given` when it is an executable file, else pg_dump on PATH."""
    found = given if given else shutil.which("pg_dump")
    if not found or not os.access(found, os.X_OK) or not Path(found).is_file():
        where = f"at {given}" if given else "on PATH"
        raise BackupError(
            f"No pg_dump {where}: install PostgreSQL's client tools (the server's major "
            "version or newer) or name one with --pg-dump PATH."
        )
    return found


def libpq_environment() -> dict[str, str]:
    """The database of DATABASE_URL as libpq's variables, so no password is on a command
    line. Its `options` (a statement_timeout) are left out: pg_dump sets its own."""
    db = connection.settings_dict
    env = {"PGDATABASE": db["NAME"]}
    for variable, value in (
        ("PGHOST", db["HOST"]),
        ("PGPORT", db["PORT"]),
        ("PGUSER", db["USER"]),
        ("PGPASSWORD", db["PASSWORD"]),
        ("PGSSLMODE", db.get("OPTIONS", {}).get("sslmode")),
    ):
        if value:
            env[variable] = str(value)
    return env


def dump(*, target: Path, pg_dump: str | None = None) -> int:
    """Write the backup to `target` (which must not exist); its size in bytes."""
    if target.exists() or target.is_symlink():
        raise BackupError(f"{target} exists: a backup never overwrites a file; name a new one.")
    binary = find_pg_dump(pg_dump)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    env = {**os.environ, **libpq_environment()}
    command = [binary, "--format=custom", "--no-password", f"--file={partial}"]
    try:
        # The operator's own pg_dump, with arguments of our making (no shell).
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)  # noqa: S603
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["no message"])[-1]
            raise BackupError(f"pg_dump failed ({result.returncode}): {last}")
        try:
            os.link(partial, target)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise BackupError(f"{target} exists: a backup never overwrites a file.") from None
        return target.stat().st_size
    finally:
        partial.unlink(missing_ok=True)
