"""A PostgreSQL cluster of a test's own that archives its WAL with pgBackRest, as
deploy/pgbackrest/ sets one up on a database host: Debian's PostgreSQL 15 (the major Debian 12's
pgBackRest handles), the shipped archive.conf included as it is, the shipped pgbackrest.conf
read as it is, with only this host's paths given through pgBackRest's PGBACKREST_* variables
and the passphrase in a conf.d file of its own, as in production. Never the machine's server:
its own data directory, socket and loopback port.

PostgreSQL refuses to run as root: as root its files and processes belong to the user the
embedded servers use (devtools.embedded), and `as_server` runs a command as that user.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg

from devtools import embedded
from devtools.sockets import free_port
from tests.needs import DEBIAN_POSTGRES_BIN
from tests.processes import ROOT, wait_for

DEPLOY = ROOT / "deploy" / "pgbackrest"
STANZA = "petstore"


@dataclass
class ArchivingCluster:
    root: Path
    port: int
    user: str | None

    @classmethod
    def make(cls, root: Path) -> ArchivingCluster:
        user = embedded.system_user()
        embedded.private_dir(root, user)
        cluster = cls(root=root, port=free_port(), user=user)
        for folder in ("repo", "lock", "spool", "conf.d", "s"):
            embedded.private_dir(root / folder, user)
        cipher = root / "conf.d" / "petstore-cipher.conf"
        cipher.write_text(f"[global]\nrepo1-cipher-pass={secrets.token_urlsafe(32)}\n")
        cipher.chmod(0o640)
        if user:
            shutil.chown(cipher, user, user)
        cluster.as_server(
            [str(DEBIAN_POSTGRES_BIN / "initdb"), "-D", str(cluster.data), "--username=postgres",
             "--auth=trust", "--encoding=UTF8", "--no-instructions"],
        )  # fmt: skip
        with open(cluster.data / "postgresql.conf", "a") as conf:
            conf.write(
                f"port = {cluster.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{root / 's'}'\n"
                f"include '{DEPLOY / 'archive.conf'}'\n"
            )
        cluster.start()
        cluster.as_server(["pgbackrest", f"--stanza={STANZA}", "stanza-create"])
        return cluster

    @property
    def data(self) -> Path:
        return self.root / "data"

    def env(self) -> dict[str, str]:
        """pgBackRest's and libpq's view of this cluster, over the shipped configuration."""
        return {
            **os.environ,
            "PGBACKREST_CONFIG": str(DEPLOY / "pgbackrest.conf"),
            "PGBACKREST_CONFIG_INCLUDE_PATH": str(self.root / "conf.d"),
            "PGBACKREST_REPO1_PATH": str(self.root / "repo"),
            "PGBACKREST_LOCK_PATH": str(self.root / "lock"),
            "PGBACKREST_SPOOL_PATH": str(self.root / "spool"),
            "PGBACKREST_PG1_PATH": str(self.data),
            "PGBACKREST_PG1_PORT": str(self.port),
            "PGBACKREST_PG1_SOCKET_PATH": str(self.root / "s"),
            "PGHOST": str(self.root / "s"),
            "PGPORT": str(self.port),
            "PGUSER": "postgres",
        }

    def server_prefix(self) -> list[str]:
        return ["runuser", "-u", self.user, "--"] if self.user else []

    def as_server(self, command: list[str]) -> str:
        done = subprocess.run(  # noqa: S603 (our own commands)
            [*self.server_prefix(), *command],
            env=self.env(), capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (
            f"{shlex.join(command)}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
        return done.stdout

    def pg_ctl(self, action: str) -> list[str]:
        """The command that starts or stops this cluster (waiting for it), as its user."""
        log = self.root / "postgres.log"
        mode = ["-m", "fast"] if action == "stop" else ["-l", str(log)]
        return [*self.server_prefix(), str(DEBIAN_POSTGRES_BIN / "pg_ctl"), action, "-D",
                str(self.data), "-w", "-t", "300", *mode]  # fmt: skip

    def start(self) -> None:
        self.as_server(self.pg_ctl("start")[len(self.server_prefix()) :])

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(self.pg_ctl("stop"), env=self.env(), capture_output=True, check=False)  # noqa: S603

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str, database: str = "petstore"):
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(statement.encode())
            return cursor.fetchall() if cursor.description else []

    def archived_through_now(self) -> None:
        """Every WAL written so far is in the repository (pgBackRest's check switches the
        segment and waits for it)."""
        self.as_server(["pgbackrest", f"--stanza={STANZA}", "check"])

    def wait_until_promoted(self) -> None:
        wait_for(
            lambda: self.sql("SELECT NOT pg_is_in_recovery()", "postgres") == [(True,)],
            timeout=300,
            what="the restored cluster's promotion",
        )
