"""The systemd units of deploy/systemd/: one for each process of Procfile.production, running
its very command, verified by systemd-analyze, coming back by themselves (a release retried
until it succeeds, services that wait for the schema and retry forever, none bound to the
release), stopped gracefully, hardened to a `systemd-analyze security` exposure of at most
2.0, and the key that opens private keys only where the production block
(docs/operators/production.md) and compose give it, as a credential of a user of its own.
tests/deploy/test_systemd_boot.py boots them under a real systemd."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from devtools.units import UNITS_DIR, command_argv, directives, systemd_analyze, values, verify
from petstore.webserver import WebServerConfig
from tests.needs import require, systemd_analyze_missing
from tests.processes import ROOT

CHECKOUT = "/opt/petstore"
VENV_BIN = f"{CHECKOUT}/.venv/bin/"
KEY_VARIABLES = {"DOMAINS_KEY_ENCRYPTION_KEY", "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS"}
CREDENTIALS = "/etc/petstore/credentials"
# compose.yaml's key-holder services, the production block's `keyholder`, each its own user.
KEY_HOLDERS = {"certificates": "petstore-certs", "edge": "petstore-edge"}
# The exposure `systemd-analyze security` may give any unit, in its own scale (0-100, printed
# divided by 10): 2.0. The units as first shipped scored 4.8 (the edge 5.0).
EXPOSURE_THRESHOLD = 20
# Every unit's hardening, as written in each (systemd units have no include).
HARDENING = {
    "UMask": "0027",
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
    "PrivateDevices": "yes",
    "PrivateMounts": "yes",
    "ProtectKernelTunables": "yes",
    "ProtectKernelModules": "yes",
    "ProtectKernelLogs": "yes",
    "ProtectControlGroups": "yes",
    "ProtectClock": "yes",
    "ProtectHostname": "yes",
    "ProtectProc": "invisible",
    "RestrictSUIDSGID": "yes",
    "RestrictRealtime": "yes",
    "RestrictNamespaces": "yes",
    "LockPersonality": "yes",
    "MemoryDenyWriteExecute": "yes",
    "RemoveIPC": "yes",
    "SystemCallArchitectures": "native",
    "SystemCallErrorNumber": "EPERM",
    "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
}


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile.production").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def unit(process: str):
    return UNITS_DIR / f"petstore-{process}.service"


LONG_RUNNING = [name for name in procfile() if name != "release"]
# pgBackRest's base backup on the database host, by its timer: no process of the Procfile.
BACKUP = UNITS_DIR / "petstore-backup.service"
BACKUP_TIMER = UNITS_DIR / "petstore-backup.timer"
PGBACKREST_CONF = ROOT / "deploy" / "pgbackrest" / "pgbackrest.conf"


def as_procfile_argv(exec_line: str) -> list[str]:
    """The unit's command as Procfile.production writes it: the venv's programs and `env` by
    their names, not their paths, and Celery, which the units run as the venv Python's
    module (`python -m celery`), by its script's name."""
    argv = command_argv(exec_line)
    if argv[:1] == ["/usr/bin/env"] and argv[1].startswith(VENV_BIN):
        argv = argv[1:]  # through env only so that the unit verifies before the install
    if argv[:3] == [f"{VENV_BIN}python", "-m", "celery"]:
        argv = ["celery", *argv[3:]]
    return [
        word.removeprefix(VENV_BIN)
        if word.startswith(VENV_BIN)
        else word.replace("/usr/bin/env", "env")
        for word in argv
    ]


def test_the_units_are_clean_for_systemd_analyze_verify():
    require(systemd_analyze_missing, what="verifying deploy/systemd/")
    result = verify()
    assert (result.stdout + result.stderr).strip() == "", result.stdout + result.stderr
    assert result.returncode == 0


@pytest.mark.parametrize("process", list(procfile()))
def test_each_procfile_process_has_a_unit_that_runs_its_command(process):
    path = unit(process)
    assert path.exists(), f"deploy/systemd/{path.name}"
    (first, *_) = values(path, "Service", "ExecStart")
    assert as_procfile_argv(first) == shlex.split(procfile()[process])
    # From the checkout, with the production environment and the state directory.
    assert values(path, "Service", "WorkingDirectory") == [CHECKOUT]
    assert values(path, "Service", "EnvironmentFile") == ["/etc/petstore/petstore.env"]
    user = KEY_HOLDERS.get(process, "petstore")
    assert values(path, "Service", "User") == values(path, "Service", "Group") == [user]
    # The state directory is the user's own: systemd hands it to the unit's user.
    assert values(path, "Service", "StateDirectory") == [user]
    assert f"PETSTORE_VAR_DIR=/var/lib/{user}" in " ".join(values(path, "Service", "Environment"))
    # Its own name in the journal (`journalctl -t petstore-web`), not the `env` it runs through.
    assert values(path, "Service", "SyslogIdentifier") == [path.stem]


def test_no_unit_runs_a_process_procfile_production_does_not_list():
    units = {path.name for path in UNITS_DIR.iterdir()}
    processes = {unit(process).name for process in procfile()}
    assert units == {"petstore.target", BACKUP.name, BACKUP_TIMER.name} | processes


def test_the_target_wants_the_release_which_is_retried_until_it_succeeds():
    target = directives(UNITS_DIR / "petstore.target")
    assert [value for key, value in target["Unit"] if key == "Wants"] == [
        "petstore-release.service"
    ]
    assert ("WantedBy", "multi-user.target") in target["Install"]
    release = unit("release")
    assert values(release, "Service", "Type") == ["oneshot"]
    # Not RemainAfterExit: `systemctl start` runs it again on a deploy.
    assert not values(release, "Service", "RemainAfterExit")
    # PostgreSQL late at boot: tried again, without end, until it answers.
    assert values(release, "Service", "Restart") == ["on-failure"]
    assert int(values(release, "Service", "RestartSec")[0]) > 0
    assert values(release, "Unit", "StartLimitIntervalSec") == ["0"]


@pytest.mark.parametrize("process", LONG_RUNNING)
def test_a_service_waits_for_the_schema_without_ever_being_bound_to_the_release(process):
    path = unit(process)
    unit_section = dict(directives(path)["Unit"])
    # A dependency's failure would fail the service for good, and its restart would run the
    # release again (and with it stop the edge during a rollout): ordering only.
    for bond in ("Requires", "Requisite", "BindsTo", "Wants", "PropagatesStopTo"):
        assert "petstore-release" not in unit_section.get(bond, ""), (process, bond)
    assert "petstore-release.service" in " ".join(values(path, "Unit", "After"))
    assert values(path, "Service", "ExecStartPre") == [
        f"/usr/bin/env {VENV_BIN}python manage.py migrate --check"
    ]


@pytest.mark.parametrize("process", LONG_RUNNING)
def test_a_service_is_enabled_by_itself_into_the_target_it_is_part_of(process):
    path = unit(process)
    # `systemctl enable petstore-web.service` on a host that runs only some of them.
    assert directives(path)["Install"] == [("WantedBy", "petstore.target")]
    assert values(path, "Unit", "PartOf") == ["petstore.target"]


@pytest.mark.parametrize("process", list(procfile()))
def test_every_unit_is_hardened_and_writes_only_its_state_directory(process):
    path = unit(process)
    service = dict(directives(path)["Service"])
    assert {key: service.get(key) for key in HARDENING} == HARDENING
    assert values(path, "Service", "SystemCallFilter") == ["@system-service", "~@privileged"]
    assert "ReadWritePaths" not in service  # its StateDirectory alone
    capabilities = service["CapabilityBoundingSet"]
    if process == "edge":  # Caddy binds 80 and 443 as its own user
        assert capabilities == service["AmbientCapabilities"] == "CAP_NET_BIND_SERVICE"
        # A capability inside a user namespace would not reach the host's ports.
        assert "PrivateUsers" not in service
    else:
        assert capabilities == "" and "AmbientCapabilities" not in service
        assert service["PrivateUsers"] == "yes"


def test_every_unit_scores_at_most_the_threshold_in_systemd_analyze_security():
    require(systemd_analyze_missing, what="scoring deploy/systemd/")
    analyze = systemd_analyze()
    assert analyze
    for path in [*map(unit, procfile()), BACKUP]:
        result = subprocess.run(  # noqa: S603 (systemd-analyze on our own files)
            [
                analyze,
                "security",
                "--offline=yes",
                f"--threshold={EXPOSURE_THRESHOLD}",
                "--no-pager",
                str(path),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout[-300:] + result.stderr


@pytest.mark.parametrize("process", list(procfile()))
def test_only_the_certificates_worker_and_the_edge_get_the_key_as_a_credential(process):
    path = unit(process)
    service = directives(path)["Service"]
    credentials = values(path, "Service", "LoadCredential")
    unset = set(" ".join(values(path, "Service", "UnsetEnvironment")).split())
    environment = " ".join(values(path, "Service", "Environment")).split()
    # Never from the environment file, even if petstore.env holds it by mistake.
    assert unset >= KEY_VARIABLES, process
    assert all("keys.env" not in value for key, value in service), process
    if process in KEY_HOLDERS:
        names = {f"{v.lower().replace('_', '-')}" for v in KEY_VARIABLES}
        assert credentials == [f"{name}:{CREDENTIALS}/{name}" for name in sorted(names)], process
        # The settings read NAME_FILE; %d is this unit's credentials directory.
        for variable in KEY_VARIABLES:
            name = variable.lower().replace("_", "-")
            assert f"{variable}_FILE=%d/{name}" in environment, process
    else:
        assert not credentials, process
        assert not any(word.startswith("DOMAINS_KEY") for word in environment), process


def test_the_edge_access_log_is_not_rate_limited_by_journald():
    # An access line a request: journald's default 10,000 lines in 30 s is ~330 requests/s.
    assert values(unit("edge"), "Service", "LogRateLimitIntervalSec") == ["0"]


def test_the_web_unit_reloads_on_sighup_and_stops_a_little_after_the_graceful_timeout(
    monkeypatch,
):
    monkeypatch.delenv("WEB_GRACEFUL_TIMEOUT", raising=False)
    graceful = WebServerConfig.from_settings().graceful_timeout
    web = unit("web")
    # granian's main process replaces its workers one at a time on SIGHUP.
    assert values(web, "Service", "ExecReload") == ["/bin/kill -HUP $MAINPID"]
    # SIGTERM to the main process alone, which stops its workers gracefully.
    assert values(web, "Service", "KillMode") == ["mixed"]
    assert graceful < int(values(web, "Service", "TimeoutStopSec")[0]) <= graceful + 30


def test_the_certificates_worker_may_finish_a_task_before_it_is_killed(settings):
    certificates = unit("certificates")
    assert values(certificates, "Service", "KillMode") == ["mixed"]
    stop = int(values(certificates, "Service", "TimeoutStopSec")[0])
    assert settings.CELERY_TASK_TIME_LIMIT < stop <= settings.CELERY_TASK_TIME_LIMIT + 60


def test_the_backup_timer_takes_a_base_backup_daily_as_the_clusters_owner():
    """pgBackRest reads the data directory, which is postgres's alone; the command records
    the success the metric reports. Outside petstore.target: stopping the platform for a
    restore is not stopping the backups, the runbook does that."""
    assert values(BACKUP_TIMER, "Timer", "OnCalendar") == ["*-*-* 02:30:00"]
    assert values(BACKUP_TIMER, "Timer", "Persistent") == ["yes"]  # a day missed is caught up
    assert directives(BACKUP_TIMER)["Install"] == [("WantedBy", "timers.target")]
    assert values(BACKUP, "Service", "Type") == ["oneshot"]
    assert values(BACKUP, "Service", "ExecStart") == [
        f"/usr/bin/env {VENV_BIN}python manage.py basebackup"
    ]
    assert values(BACKUP, "Service", "User") == values(BACKUP, "Service", "Group") == ["postgres"]
    assert values(BACKUP, "Service", "WorkingDirectory") == [CHECKOUT]
    assert values(BACKUP, "Service", "SyslogIdentifier") == [BACKUP.stem]
    assert "PartOf" not in dict(directives(BACKUP)["Unit"])
    assert "Install" not in directives(BACKUP)  # started by its timer alone
    service = dict(directives(BACKUP)["Service"])
    assert {key: service.get(key) for key in HARDENING} == HARDENING
    assert service["PrivateUsers"] == "yes" and service["CapabilityBoundingSet"] == ""
    assert not values(BACKUP, "Service", "LoadCredential")
    assert set(" ".join(values(BACKUP, "Service", "UnsetEnvironment")).split()) >= KEY_VARIABLES
    # It writes the repository pgbackrest.conf names, and nothing else but its state.
    [repository] = [
        line.partition("=")[2]
        for line in PGBACKREST_CONF.read_text().splitlines()
        if line.startswith("repo1-path=")
    ]
    assert values(BACKUP, "Service", "ReadWritePaths") == [repository]


def test_the_pgbackrest_repository_is_encrypted_kept_for_a_while_and_holds_no_passphrase():
    settings = dict(
        line.split("=", 1)
        for line in PGBACKREST_CONF.read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert settings["repo1-cipher-type"] == "aes-256-cbc"
    assert int(settings["repo1-retention-full"]) >= 2
    assert "repo1-cipher-pass" not in settings  # a file of its own, root's and postgres's
    archive = (ROOT / "deploy" / "pgbackrest" / "archive.conf").read_text()
    assert "archive_command = 'pgbackrest --stanza=petstore archive-push %p'" in archive
