"""The programs a backup runs: the pg_dump that fits the server, and pgBackRest.

pg_dump refuses a server of a newer major version than its own ("server version: 18.6;
pg_dump version: 15.20"), and a host often has several: Debian installs each major's in
/usr/lib/postgresql/<major>/bin and puts one on PATH, and `make run`'s embedded server brings
its own. So the one of the server's major is taken where there is one, else the oldest newer
one, looked for in the server's own bin directory (when the database user may read it and
it is on this host), Debian's directories and PATH; none fits is one line naming the
package to install.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

from django.db import connection

from petstore.backups.records import BackupError

# Debian's (and Ubuntu's) clients, one directory a major version.
CLIENT_DIRS = "/usr/lib/postgresql/*/bin"
VERSION = re.compile(r"\(PostgreSQL\) (\d+)")


def server_major() -> int:
    """The major version of the server DATABASE_URL names (15 for 15.20)."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        (number,) = cursor.fetchone()
    return int(number) // 10000


def server_bindir() -> Path | None:
    """The server's own bin directory, when the database user may ask (pg_config is a
    superuser's by default, as under `make run`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CASE WHEN has_function_privilege('pg_config()', 'EXECUTE')"
            " THEN (SELECT setting FROM pg_config WHERE name = 'BINDIR') END"
        )
        (bindir,) = cursor.fetchone()
    return Path(bindir) if bindir else None


def client_major(binary: str) -> int | None:
    """The major version `binary --version` says, or None when it does not run."""
    try:
        # A program found on this host or named by the operator, with our own argument.
        done = subprocess.run(  # noqa: S603
            [binary, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    found = VERSION.search(done.stdout)
    return int(found.group(1)) if done.returncode == 0 and found else None


def candidates() -> list[str]:
    """Every pg_dump on this host, each once: the server's, Debian's, PATH's."""
    found: list[str] = []
    bindir = server_bindir()
    paths = [str(bindir / "pg_dump")] if bindir else []
    paths += sorted(glob.glob(f"{CLIENT_DIRS}/pg_dump"), reverse=True)
    paths += [on_path] if (on_path := shutil.which("pg_dump")) else []
    seen = set()
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and os.access(path, os.X_OK) and Path(path).is_file():
            seen.add(real)
            found.append(path)
    return found


def install_hint(major: int) -> str:
    return (
        f"install PostgreSQL {major}'s client (Debian: apt-get install postgresql-client-{major}, "
        "from apt.postgresql.org for a major Debian does not ship) or name one with "
        "--pg-dump PATH."
    )


def find_pg_dump(given: str | None) -> str:
    """`given` (when it runs and is not older than the server), else the best on this host."""
    major = server_major()
    if given:
        if not (os.access(given, os.X_OK) and Path(given).is_file()):
            raise BackupError(f"No pg_dump at {given}: {install_hint(major)}")
        version = client_major(given)
        if version is None or version < major:
            raise BackupError(
                f"pg_dump at {given} is version {version or 'unknown'}, older than the "
                f"server's {major}: {install_hint(major)}"
            )
        return given
    versions = {path: client_major(path) for path in candidates()}
    fitting = sorted(
        ((version, path) for path, version in versions.items() if version and version >= major),
        key=lambda found: found[0],
    )
    if fitting:
        return fitting[0][1]
    if versions:
        older = ", ".join(f"{path} ({version})" for path, version in versions.items())
        raise BackupError(
            f"Every pg_dump here is older than the server's {major} ({older}): "
            f"{install_hint(major)}"
        )
    raise BackupError(f"No pg_dump on PATH or in {CLIENT_DIRS}: {install_hint(major)}")


def find_pgbackrest(given: str | None) -> str:
    """`given`, else pgbackrest on PATH."""
    found = given or shutil.which("pgbackrest")
    if not found or not (os.access(found, os.X_OK) and Path(found).is_file()):
        where = f"at {given}" if given else "on PATH"
        raise BackupError(
            f"No pgbackrest {where}: apt-get install pgbackrest (Debian's package), "
            "configured as deploy/pgbackrest/pgbackrest.conf, or name one with --pgbackrest PATH."
        )
    return found
