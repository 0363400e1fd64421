"""docs/operators/backups.md's restore to a point in time, run as written: its second block
of "Restoring to a point in time" is handed to bash unchanged, after the first block's values
of this restore (the target, where the secrets are) and stand-ins for what acts on the host's
services and users: `systemctl` starts and stops this test's cluster (and a base backup for
`petstore-backup.service`), `runuser -u postgres` runs as the cluster's user, `chgrp` notes
the group, `manage` is manage.py on the cluster's database. pgBackRest, psql, openssl and
install are the real ones.

The platform: pets written before a base backup, after it, then after a noted time; a session
of each period; a message in the broker. Restored to the noted time, no id seen before the
restore is handed out again (those of the rows after the target included), every session is
gone, the broker's database is empty and the platform's certificate is in place.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC
from pathlib import Path

import pytest
import redis

from tests.needs import pgbackrest_missing, require
from tests.petstore.backups.cluster import ArchivingCluster
from tests.processes import ROOT, OwnRedis, service_env

RUNBOOK = ROOT / "docs" / "operators" / "backups.md"
SECTION = "## Restoring to a point in time"

MAKE_PETS = """
import json
from django.contrib.sessions.backends.db import SessionStore
from pets.models import Category
from pets.services import pet_create
dogs, _ = Category.objects.get_or_create(name="Dogs")
session = SessionStore()
session["signed_in"] = "{label}"
session.create()
pets = [pet_create(name=f"{label} {{n}}", category=dogs).pk for n in range({count})]
print(json.dumps({{"pets": pets, "session": session.session_key}}))
"""


def runbook_blocks() -> tuple[str, str]:
    """The restore's two bash blocks: this restore's values, then the steps."""
    section = RUNBOOK.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    values, steps = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return values, steps


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(  # noqa: S603 (manage.py of this checkout)
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def make_pets(env: dict[str, str], label: str, count: int) -> dict:
    """`count` pets made by the pets service, and a session, committed; their ids and key."""
    out = manage(env, "shell", "-c", MAKE_PETS.format(label=label, count=count))
    return json.loads(out.strip().splitlines()[-1])


def stand_ins(cluster: ArchivingCluster, steps_log: Path, pgbackrest_as_server: Path) -> str:
    """The host's service manager and users, as this test has them."""
    as_server = shlex.join(["command", *cluster.server_prefix()]) if cluster.user else ""
    return f"""
systemctl() {{
  local verb=$1 unit; shift
  for unit in "$@"; do
    echo "systemctl $verb $unit" >> {shlex.quote(str(steps_log))}
    case "$verb $unit" in
      "stop postgresql") command {shlex.join(cluster.pg_ctl("stop"))} >/dev/null ;;
      "start postgresql") command {shlex.join(cluster.pg_ctl("start"))} >/dev/null ;;
      "start petstore-backup.service") manage basebackup --pgbackrest {pgbackrest_as_server} ;;
      "stop petstore"* | "start petstore"*) ;;
      *) echo "systemctl: no unit $unit here" >&2; return 1 ;;
    esac
  done
}}
runuser() {{
  [ "$1 $2 $3" = "-u postgres --" ] || {{ echo "runuser: only -u postgres -- here" >&2; return 2; }}
  shift 3
  {as_server} "$@"
}}
manage() {{
  echo "manage $1" >> {shlex.quote(str(steps_log))}
  (cd {shlex.quote(str(ROOT))} && {shlex.quote(sys.executable)} manage.py "$@")
}}
chgrp() {{ echo "chgrp $*" >> {shlex.quote(str(steps_log))}; }}
"""


def platform_certificate(secrets: Path) -> None:
    secrets.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", "/CN=dashboard.example.test",
         "-keyout", str(secrets / "platform.key"), "-out", str(secrets / "platform.crt")],
        check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def cluster():
    require(pgbackrest_missing, what="the restore runbook")
    # Not under pytest's base folder, which any pytest starting on this machine makes its
    # owner's alone again (the cluster's user must reach it); a short path, as the socket's
    # name must fit in 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="petstore-pitr-"))
    made = ArchivingCluster.make(root)
    yield made
    made.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def broker(tmp_path):
    own = OwnRedis(tmp_path).start()
    yield own
    own.kill()


# A cluster, a migration, two base backups and a restore: minutes, on a busy machine more.
@pytest.mark.timeout(600)
def test_a_restore_to_a_point_in_time_hands_out_no_id_twice(cluster, broker, settings, tmp_path):
    var = tmp_path / "var"
    etc = tmp_path / "etc"
    etc.mkdir()
    env = {
        **service_env(settings),
        **cluster.env(),
        "DATABASE_URL": cluster.url("petstore"),
        "REDIS_URL": broker.url(0),
        "CELERY_BROKER_URL": broker.url(1),
        "PETSTORE_VAR_DIR": str(var),
    }
    cluster.sql("CREATE DATABASE petstore", "postgres")
    manage(env, "migrate", "--noinput")
    pgbackrest_as_server = tmp_path / "pgbackrest-as-server"
    pgbackrest_as_server.write_text(
        f'#!/bin/sh\nexec {shlex.join(cluster.server_prefix())} pgbackrest "$@"\n'
    )
    pgbackrest_as_server.chmod(0o755)

    # Pets and a session before the base backup, after it, and after the target.
    before_backup = make_pets(env, "before the backup", 3)
    assert "full" in manage(env, "basebackup", "--pgbackrest", str(pgbackrest_as_server))
    before_target = make_pets(env, "before the target", 3)
    [(target,)] = cluster.sql("SELECT clock_timestamp()")
    after_target = make_pets(env, "after the target", 5)
    seen = before_backup["pets"] + before_target["pets"] + after_target["pets"]
    redis.Redis.from_url(broker.url(1)).lpush("checks", "a task queued after the target")
    cluster.archived_through_now()

    # This restore's values, then the runbook's steps as written.
    secrets = tmp_path / "secrets"
    platform_certificate(secrets)
    values, steps = runbook_blocks()
    steps_log = tmp_path / "steps"
    ours = {
        "TARGET": target.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00"),
        "SECRETS": str(secrets),
        "CERTIFICATE": str(etc / "platform.crt"),
        "KEY": str(etc / "platform.key"),
    }
    assert set(re.findall(r"^([A-Z]+)=", values, flags=re.M)) == set(ours)
    assignments = "\n".join(f"{name}={shlex.quote(value)}" for name, value in ours.items())
    script = "\n".join([stand_ins(cluster, steps_log, pgbackrest_as_server), assignments, steps])
    done = subprocess.run(  # noqa: S603 (the runbook)
        ["bash", "-c", script], cwd=cluster.root, env=env, capture_output=True, text=True,
        timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    # The platform stopped before the marks, the cluster restored between them and the
    # after-restore steps, the platform started last.
    taken = steps_log.read_text().splitlines()
    order = [
        "systemctl stop petstore.target",
        "manage idmarks",
        "systemctl stop postgresql",
        "systemctl start postgresql",
        "manage afterrestore",
        f"chgrp petstore-edge {etc / 'platform.key'}",
        "systemctl start petstore-backup.service",
        "systemctl start petstore.target",
    ]
    assert [step for step in taken if step in order] == order
    # Back at the target: the rows after it are gone.
    names = {name.rsplit(" ", 1)[0] for (name,) in cluster.sql("SELECT name FROM pets_pet")}
    assert names == {"before the backup", "before the target"}
    # A new pet's id was never handed out, nor any id below it.
    [new] = make_pets(env, "after the restore", 1)["pets"]
    assert new not in seen and new > max(seen)
    # Only the new session: every one from before the restore is gone.
    keys = {key for (key,) in cluster.sql("SELECT session_key FROM django_session")}
    assert keys.isdisjoint({before_backup["session"], before_target["session"]})
    assert len(keys) == 1
    assert redis.Redis.from_url(broker.url(1)).dbsize() == 0
    assert not (var / "id-marks.json").exists()  # used once
    # The platform's certificate and key, as the edge reads them.
    assert (etc / "platform.crt").read_bytes() == (secrets / "platform.crt").read_bytes()
    assert (etc / "platform.key").stat().st_mode & 0o777 == 0o640
    # The new timeline's backup, recorded for the metric.
    recorded = dict(cluster.sql("SELECT kind, finished_at FROM petstore_backupsuccess"))
    assert set(recorded) == {"pgbackrest"} and recorded["pgbackrest"] > target
