"""compose.yaml run for years: each service stops as gracefully as its systemd unit, says
whether it works (a health check of its own, tried here where it can run), logs into rotated
files; Redis keeps nothing on disk, and a backup service writes private dumps into a named
volume. Docker cannot run here: the checks run as Docker would run them."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from devtools.units import UNITS_DIR, values
from tests.deploy.test_compose_and_image import dockerfile_stages
from tests.processes import ROOT

# Procfile.production's processes that run until stopped: each has a systemd unit too.
LONG_RUNNING = ("web", "edge", "worker", "certificates", "webhooks", "beat")
WORKERS = ("worker", "certificates", "webhooks")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def _seconds(duration: str) -> int:
    assert duration.endswith("s") and duration[:-1].isdigit(), duration
    return int(duration[:-1])


def test_every_long_running_service_has_a_health_check_of_its_own(compose):
    """Not the image's (web's /healthz): each process says whether it works, and the release
    step, which ends, has none."""
    services = compose["services"]
    assert services["release"]["healthcheck"] == {"disable": True}
    for name in (*LONG_RUNNING, "backup", "db", "redis"):
        check = services[name]["healthcheck"]
        assert check["test"][0] == "CMD", name
        assert _seconds(check["timeout"]) <= _seconds(check["interval"]), name


@pytest.mark.parametrize("worker", WORKERS)
def test_each_worker_is_pinged_by_its_own_node_name_through_the_broker(compose, worker):
    service = compose["services"][worker]
    command = service["command"]
    node = command[command.index("-n") + 1]
    assert node.endswith("@%h")  # %h: the container's host name, $HOSTNAME in the check
    check = service["healthcheck"]["test"]
    assert check[:3] == ["CMD", "sh", "-c"]
    pinged = shlex.split(check[3])
    assert pinged[:4] == ["celery", "-A", "petstore", "inspect"] and "ping" in pinged
    # compose writes $ as $$; the shell then reads $HOSTNAME.
    assert pinged[pinged.index("-d") + 1] == node.replace("%h", "$$HOSTNAME")


def _run_check(test: list[str], cwd, env: dict[str, str]) -> int:
    """A health check's command as Docker runs it (CMD: an argv, `$$` being compose's `$`)."""
    argv = [word.replace("$$", "$") for word in test[1:]]
    if argv[0] == "python":
        argv[0] = sys.executable
    return subprocess.run(argv, cwd=cwd, env=env, timeout=60, capture_output=True).returncode


def test_the_edges_check_asks_whether_caddy_takes_connections_on_https_port(compose):
    check = compose["services"]["edge"]["healthcheck"]["test"]
    env = {"PATH": os.environ["PATH"]}
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = str(listening.getsockname()[1])
        assert _run_check(check, ROOT, {**env, "HTTPS_PORT": port}) == 0
    # Nobody listens there any more.
    assert _run_check(check, ROOT, {**env, "HTTPS_PORT": port}) != 0


def test_beats_check_fails_once_its_last_tick_is_two_minutes_old(compose, settings, tmp_path):
    check = compose["services"]["beat"]["healthcheck"]["test"]
    # The file the active beat touches at each tick is the settings' (in PETSTORE_VAR_DIR,
    # which compose leaves at the image's var/).
    ticked = Path(settings.BEAT_TICKED_FILE)
    assert f"-name {ticked.name} " in check[-1]
    (tmp_path / "var").mkdir()
    env = {"PATH": os.environ["PATH"]}
    assert _run_check(check, tmp_path, env) != 0  # beat never ticked
    written = tmp_path / "var" / ticked.name
    written.write_bytes(b"")
    assert _run_check(check, tmp_path, env) == 0
    three_minutes_ago = time.time() - 3 * 60
    os.utime(written, (three_minutes_ago, three_minutes_ago))
    assert _run_check(check, tmp_path, env) != 0


def test_each_service_has_the_stop_timeout_of_its_systemd_unit(compose):
    """TimeoutStopSec comes from the settings (tests/deploy/test_systemd_units.py): compose
    waits as long before it kills, so a certificate task or web's drain is not cut short."""
    services = compose["services"]
    for name in LONG_RUNNING:
        [stop] = values(UNITS_DIR / f"petstore-{name}.service", "Service", "TimeoutStopSec")
        assert services[name]["stop_grace_period"] == f"{stop}s", name


def test_every_container_logs_to_rotated_files(compose):
    for name, service in compose["services"].items():
        logging = service["logging"]
        assert logging["driver"] == "json-file", name
        assert re.fullmatch(r"\d+m", logging["options"]["max-size"]), name
        assert int(logging["options"]["max-file"]) >= 2, name


def test_redis_keeps_nothing_on_disk(compose):
    """The broker and cache only (the database is the record): no RDB snapshot, no
    append-only file, and /data in memory instead of an anonymous volume per `up`."""
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[0] == "redis-server"
    assert command[command.index("--save") + 1] == ""
    assert command[command.index("--appendonly") + 1] == "no"
    assert redis["tmpfs"] == ["/data"]
    assert "volumes" not in redis


def test_the_backup_service_writes_private_dumps_into_a_named_volume(compose):
    backup = compose["services"]["backup"]
    [volume] = backup["volumes"]
    name, _, path = volume.partition(":")
    assert name in compose["volumes"]
    script = backup["command"][-1]
    # Files made 0600 (umask 077), whatever writes them, into the volume.
    assert script.lstrip().startswith("umask 077")
    [line] = [line for line in script.splitlines() if "manage.py backup" in line]
    target = shlex.split(line.strip())[3]
    assert ("/app/" + target).startswith(path + "/")
    assert "sleep" in script and "-delete" in script
    # The image makes the mount point its user's, which a new named volume takes over.
    assert "mkdir -p var/ca var/backups" in " ".join(sum(dockerfile_stages(), []))
