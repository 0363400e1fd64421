"""pgBackRest's base backup of the cluster: with the WAL archive PostgreSQL pushes to the same
encrypted repository (archive_command), it restores the cluster to any point in time since
the oldest backup kept (deploy/pgbackrest/, docs/operators/backups.md).

A full backup when the newest full one is older than `full_every` days (or there is none),
a differential one (the files changed since that full) otherwise: a restore then needs at
most two backups and the WAL since the second. pgBackRest expires what its retention
(`repo1-retention-full`) leaves out once a backup finishes. pgBackRest runs as the cluster's
owner with its own configuration (/etc/pgbackrest/pgbackrest.conf, PGBACKREST_* variables);
its lines go to this process's output, so to the unit's journal. Each backup finished is
recorded (BackupSuccess, kind `pgbackrest`).
"""

from __future__ import annotations

import json
import subprocess
import time

from petstore.backups.clients import find_pgbackrest
from petstore.backups.records import BackupError, backup_succeeded, last_line
from petstore.models import BackupSuccess

DEFAULT_STANZA = "petstore"
DEFAULT_FULL_EVERY_DAYS = 7
TYPES = ("full", "diff", "incr")


def run(binary: str, *arguments: str, capture: bool = False) -> subprocess.CompletedProcess:
    """pgbackrest with `arguments`; its log lines pass through unless `capture`."""
    # The operator's pgbackrest, with arguments of our making (no shell).
    done = subprocess.run(  # noqa: S603
        [binary, *arguments],
        stdout=subprocess.PIPE if capture else None,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        command = " ".join(word for word in arguments if not word.startswith("--"))
        why = last_line(done.stderr)
        raise BackupError(f"pgbackrest {command} failed ({done.returncode}): {why}")
    return done


def newest_full_age_days(binary: str, stanza: str) -> float | None:
    """How many days ago the newest full backup in the repository ended; None when none."""
    done = run(binary, f"--stanza={stanza}", "--output=json", "info", capture=True)
    stops = [
        backup["timestamp"]["stop"]
        for listed in json.loads(done.stdout or "[]")
        for backup in listed.get("backup", [])
        if backup.get("type") == "full"
    ]
    return (time.time() - max(stops)) / 86400 if stops else None


def choose_type(binary: str, stanza: str, full_every_days: float) -> str:
    age = newest_full_age_days(binary, stanza)
    return "full" if age is None or age >= full_every_days else "diff"


def base_backup(
    *,
    stanza: str = DEFAULT_STANZA,
    backup_type: str | None = None,
    full_every_days: float = DEFAULT_FULL_EVERY_DAYS,
    pgbackrest: str | None = None,
) -> str:
    """Take a base backup of `backup_type` (chosen by the age of the newest full one when
    None) and record it; the type taken."""
    if backup_type is not None and backup_type not in TYPES:
        raise BackupError(f"A backup type is one of {', '.join(TYPES)}, not {backup_type!r}.")
    binary = find_pgbackrest(pgbackrest)
    chosen = backup_type or choose_type(binary, stanza, full_every_days)
    run(binary, f"--stanza={stanza}", f"--type={chosen}", "backup")
    backup_succeeded(kind=BackupSuccess.Kind.BASE, detail=f"{chosen} of stanza {stanza}")
    return chosen
