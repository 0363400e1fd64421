"""`make run` shows its work: the install says what it does and how long each step took,
the hints name the account page, the mail inbox and the webhook receiver and give a second
terminal this run's URL (which the README's curl lines read), and beat's routine lines stay
out of the console unless asked for."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from django.urls import Resolver404, resolve

from devtools.devserver import hint_lines, procfile_command
from tests.processes import ROOT

BASE = "http://localhost:8123"


def urls(lines: list[str]) -> list[str]:
    return re.findall(r"https?://[^\s\"']+", "\n".join(lines))


def test_the_hints_name_pages_that_exist_under_debug():
    lines = hint_lines(BASE, "var/local.env")
    found = {urlsplit(url).path for url in urls(lines)}
    assert {
        "/dashboard/",
        "/dashboard/settings/account/",
        "/dev/mail/",
        "/dev/webhooks/demo/",
    } <= found
    for path in found - {"", "/metrics"}:  # /metrics is answered by a middleware
        try:
            resolve(path, urlconf="devtools.urls")
        except Resolver404:
            pytest.fail(f"the hints name {path}, which DEBUG's URL conf does not serve")


def test_the_webhook_receiver_hint_is_a_loopback_address_the_worker_can_reach():
    [line] = [line for line in hint_lines(BASE, "var/local.env") if "/dev/webhooks/" in line]
    assert "http://127.0.0.1:8123/dev/webhooks/demo/" in line


def test_the_hints_export_the_url_the_curl_lines_read(tmp_path):
    local_env = shlex.quote(str(tmp_path / "local env"))
    lines = hint_lines(BASE, local_env)
    [export] = [line.strip() for line in lines if line.strip().startswith("export ")]
    [curl] = [line.strip() for line in lines if "/v1/pets" in line]
    assert '"$PETSTORE_URL/v1/pets"' in curl
    shell = subprocess.run(
        ["bash", "-c", f'{export}; printf "%s|%s" "$PETSTORE_URL" "$PETSTORE_ENV_FILE"'],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    assert shell.stdout == f"{BASE}|{tmp_path / 'local env'}"


def readme() -> str:
    return (ROOT / "README.md").read_text()


def test_the_readme_s_curl_lines_use_the_url_make_run_printed():
    curls = [line for line in readme().splitlines() if line.lstrip().startswith("curl ")]
    assert curls
    for line in curls:
        assert "$PETSTORE_URL/" in line, line
        assert "localhost:" not in line, line
    # The line that sets it is the hints' own, on the default port.
    [export] = [line for line in hint_lines("http://localhost:8000", "var/local.env")
                if line.strip().startswith("export ")]  # fmt: skip
    assert export.strip() in readme()


def test_the_readme_s_first_steps_name_the_account_page_the_inbox_and_the_receiver():
    steps = readme()[readme().index("## First steps") :]
    steps = steps[: steps.index("\n## ", 1)]
    for page in ("/dashboard/settings/account/", "/dev/mail/", "/dev/webhooks/"):
        assert page in steps, page


BEAT = "celery -A petstore --quiet beat"
# What beat's logging lets through, printed by the process the Procfile's line starts, with
# Celery's own start replaced by the logging set-up it runs (petstore/celery.py).
LOGS_INFO = (
    "import logging; from petstore.celery import use_django_logging; use_django_logging(); "
    "print(logging.getLogger('celery.beat').isEnabledFor(logging.INFO), "
    "logging.getLogger('celery.beat').isEnabledFor(logging.WARNING))"
)


def beat_logs(**env: str) -> str:
    command = procfile_command("beat")
    assert BEAT in command
    probe = command.replace(BEAT, f"{shlex.quote(sys.executable)} -c {shlex.quote(LOGS_INFO)}")
    base = {k: v for k, v in os.environ.items() if k not in {"LOG_LEVEL", "BEAT_LOG_LEVEL"}}
    shell = subprocess.run(
        ["sh", "-c", probe], cwd=ROOT, env={**base, **env},
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return shell.stdout.split("\n")[-2]


def test_beat_logs_its_warnings_but_not_its_routine_unless_asked():
    assert beat_logs() == "False True"
    assert beat_logs(LOG_LEVEL="INFO") == "False True"  # the other processes' level
    assert beat_logs(BEAT_LOG_LEVEL="INFO") == "True True"


def test_the_install_shows_pip_s_progress_and_each_step_s_time(tmp_path):
    """The install rule as `make run` runs it, with a pip that only says what it was asked."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    pip = venv / "bin" / "pip"
    pip.write_text('#!/bin/sh\necho "pip $*"\n')
    pip.chmod(pip.stat().st_mode | stat.S_IEXEC)
    checksum = subprocess.run(
        "cat requirements/run.txt pyproject.toml | cksum | cut -d' ' -f1",
        shell=True, cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    result = subprocess.run(
        ["make", "--no-print-directory", f"VENV={venv}", f"{venv}/.installed-run-{checksum}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"make: installing the locked 'run' set (requirements/run.txt) into {venv}"
    install = lines[1].split()
    assert install[:2] == ["pip", "install"]
    assert "--quiet" not in install  # pip's own lines: what it collects, downloads, installs
    assert re.fullmatch(r"make: installed the 'run' set \(\d+ s\)", lines[2])
    assert re.fullmatch(r"make: installed this checkout \(pip install -e \.\) \(\d+ s\)", lines[-1])
