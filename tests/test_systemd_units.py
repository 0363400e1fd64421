"""The systemd units of deploy/systemd/: one for each process of Procfile.production, running
its very command, verified by systemd-analyze, restarted within limits, stopped gracefully,
hardened, and the key that opens private keys only where the production block
(docs/operators/production.md) and compose give it."""

from __future__ import annotations

import shlex

import pytest

from devtools.units import UNITS_DIR, command_argv, directives, values, verify
from petstore.webserver import WebServerConfig
from tests.needs import require, systemd_analyze_missing
from tests.processes import ROOT

CHECKOUT = "/opt/petstore"
VENV_BIN = f"{CHECKOUT}/.venv/bin/"
KEY_FILE = "/etc/petstore/keys.env"
KEY_HOLDERS = {
    "certificates",
    "edge",
}  # compose.yaml's key-holder services, the production block's `keyholder`


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile.production").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def unit(process: str):
    return UNITS_DIR / f"petstore-{process}.service"


LONG_RUNNING = [name for name in procfile() if name != "release"]


def as_procfile_argv(exec_line: str) -> list[str]:
    """The unit's command as Procfile.production writes it: the venv's programs and `env` by
    their names, not their paths."""
    argv = command_argv(exec_line)
    if argv[:1] == ["/usr/bin/env"] and argv[1].startswith(VENV_BIN):
        argv = argv[1:]  # through env only so that the unit verifies before the install
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
    assert values(path, "Service", "EnvironmentFile")[0] == "/etc/petstore/petstore.env"
    assert "PETSTORE_VAR_DIR=/var/lib/petstore" in " ".join(values(path, "Service", "Environment"))
    assert values(path, "Service", "User") == ["petstore"]


def test_no_unit_runs_a_process_procfile_production_does_not_list():
    units = {path.name for path in UNITS_DIR.iterdir()}
    assert units == {"petstore.target"} | {unit(process).name for process in procfile()}


def test_the_target_starts_every_long_running_unit_after_the_release():
    target = directives(UNITS_DIR / "petstore.target")
    wanted = " ".join(value for key, value in target["Unit"] if key == "Wants").split()
    assert sorted(wanted) == sorted(unit(process).name for process in LONG_RUNNING)
    assert ("WantedBy", "multi-user.target") in target["Install"]
    release = unit("release")
    assert values(release, "Service", "Type") == ["oneshot"]
    # Not RemainAfterExit: `systemctl start` runs it again on a deploy, and restarting it
    # never restarts the services that require it.
    assert not values(release, "Service", "RemainAfterExit")
    for process in LONG_RUNNING:
        path = unit(process)
        assert "petstore-release.service" in values(path, "Unit", "Requires"), process
        assert "petstore-release.service" in " ".join(values(path, "Unit", "After")), process
        assert values(path, "Unit", "PartOf") == ["petstore.target"], process


@pytest.mark.parametrize("process", LONG_RUNNING)
def test_a_process_that_ends_is_restarted_within_a_rate_limit(process):
    path = unit(process)
    assert values(path, "Service", "Restart") == ["always"]
    assert int(values(path, "Unit", "StartLimitBurst")[0]) >= 1
    assert int(values(path, "Unit", "StartLimitIntervalSec")[0]) >= 60


@pytest.mark.parametrize("process", list(procfile()))
def test_every_unit_is_hardened_and_writes_only_its_state_directory(process):
    service = dict(directives(unit(process))["Service"])
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "StateDirectory": "petstore",
    }.items():
        assert service.get(key) == value, (process, key)
    capabilities = service["CapabilityBoundingSet"]
    if process == "edge":  # Caddy binds 80 and 443 as the petstore user
        assert capabilities == service["AmbientCapabilities"] == "CAP_NET_BIND_SERVICE"
    else:
        assert capabilities == "" and "AmbientCapabilities" not in service


@pytest.mark.parametrize("process", list(procfile()))
def test_only_the_certificates_worker_and_the_edge_get_the_key_that_opens_private_keys(process):
    path = unit(process)
    files = values(path, "Service", "EnvironmentFile")
    unset = " ".join(values(path, "Service", "UnsetEnvironment")).split()
    if process in KEY_HOLDERS:
        assert files[-1] == KEY_FILE  # last: it wins over petstore.env
        assert not unset
    else:
        assert KEY_FILE not in files
        # Even when petstore.env holds it by mistake.
        assert {"DOMAINS_KEY_ENCRYPTION_KEY", "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS"} <= set(unset)


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
