"""A logical copy of the platform's database: `pg_dump --format=custom` of DATABASE_URL to a
file, sealed with a passphrase when one is given (petstore/backups/sealing.py).

The database is half of a backup; the other half is DOMAINS_KEY_ENCRYPTION_KEY, which
seals every certificate's private key in it (docs/operators/backups.md). The copy holds the
sessions and the webhooks' signing secrets, so its file is its owner's alone from its
creation (made 0600 before a byte is written, whatever the umask), and sealed when the copy
leaves the host. It is written beside the target under a temporary name and linked to the
target's name only once pg_dump has succeeded, so a target that exists is always a whole
backup, and an existing file is never overwritten (the link fails instead). Each copy made
is recorded (BackupSuccess, kind `logical`).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from django.db import connection

from petstore.backups import sealing
from petstore.backups.clients import find_pg_dump
from petstore.backups.records import BackupError, backup_succeeded, last_line
from petstore.models import BackupSuccess

__all__ = ["BackupError", "dump", "libpq_environment"]


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


def run_pg_dump(command: list[str], partial: Path, passphrase: bytes | None) -> None:
    """pg_dump into `partial` (already made 0600): by its own --file, or through the seal."""
    env = {**os.environ, **libpq_environment()}
    if passphrase is None:
        # The operator's own pg_dump, with arguments of our making (no shell).
        done = subprocess.run(  # noqa: S603
            [*command, f"--file={partial}"], env=env, capture_output=True, text=True, check=False
        )
        returncode, stderr = done.returncode, done.stderr
    else:
        # Its messages into a file, so that a full pipe never stalls the copy.
        with tempfile.TemporaryFile() as errors, open(partial, "wb") as target:
            process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=errors)  # noqa: S603
            assert process.stdout is not None
            with process.stdout:
                sealing.seal(process.stdout, target, passphrase)
            returncode = process.wait()
            errors.seek(0)
            stderr = errors.read().decode(errors="replace")
    if returncode != 0:
        raise BackupError(f"pg_dump failed ({returncode}): {last_line(stderr)}")


def dump(*, target: Path, pg_dump: str | None = None, passphrase_file: str | None = None) -> int:
    """Write the backup to `target` (which must not exist), sealed with the passphrase in
    `passphrase_file` when given; its size in bytes."""
    if target.exists() or target.is_symlink():
        raise BackupError(f"{target} exists: a backup never overwrites a file; name a new one.")
    passphrase = None
    if passphrase_file:
        try:
            passphrase = sealing.read_passphrase(passphrase_file)
        except sealing.SealError as exc:
            raise BackupError(str(exc)) from None
    binary = find_pg_dump(pg_dump)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    # The file is its owner's alone from its creation: the mode is set by the open, before
    # the first byte, never by a chmod after it.
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        run_pg_dump([binary, "--format=custom", "--no-password"], partial, passphrase)
        try:
            os.link(partial, target)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise BackupError(f"{target} exists: a backup never overwrites a file.") from None
    finally:
        partial.unlink(missing_ok=True)
    sealed = " (sealed)" if passphrase else ""
    backup_succeeded(kind=BackupSuccess.Kind.LOGICAL, detail=f"{target}{sealed}")
    return target.stat().st_size
