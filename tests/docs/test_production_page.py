"""The production block of docs/operators/production.md, followed literally.

In a copy of this work tree that has the `var/local.env` (DEBUG=1) `make run` leaves behind,
with a fresh PostgreSQL database and a Redis of its own: `.env` is written from `.env.example`
with this test's database, Redis, secret and ports, then every `sh` block of that page's
"By hand, on one machine" section runs, in order, in one shell. The processes it starts must
serve with DEBUG off, the page's createPet must be a 201, /readyz with an IP Host a 200, and plain
HTTP through the edge a redirect to https.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
import requests
from packaging.markers import Marker
from packaging.utils import canonicalize_name
from psycopg import sql

from tests.processes import ROOT, OwnRedis, database_url, free_port

pytestmark = pytest.mark.timeout(900)

# What a deployer's shell has; nothing of this test run's settings leaks in.
PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYENV_ROOT")


PRODUCTION_PAGE = Path("docs/operators/production.md")


def production_blocks(page: str) -> list[str]:
    section = page.split("\n## By hand, on one machine\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)


def copy_work_tree(destination: Path) -> None:
    """The files of this work tree as git sees them, committed or not (no .venv, no var)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def env_file_from_example(example: str, values: dict[str, str]) -> str:
    """.env.example with this test's values on the lines that set them."""
    lines = []
    for line in example.splitlines():
        name = line.partition("=")[0]
        lines.append(f"{name}={values[name]}" if name in values and "=" in line else line)
    text = "\n".join(lines) + "\n"
    for name in values:
        assert re.search(rf"^{name}=", text, re.MULTILINE), f".env.example does not set {name}"
    return text


def test_the_production_block_binds_the_web_processes_where_only_the_edge_reaches_them():
    commands = "\n".join(production_blocks((ROOT / PRODUCTION_PAGE).read_text()))
    (web,) = [line for line in commands.splitlines() if "petstore.webserver" in line]
    # The launcher's own default address, loopback (tests/petstore/test_webserver.py); no
    # access lines, the edge writes them (tests/domains/edge/test_access_log.py).
    assert web.startswith("WEB_ACCESS_LOG=0 .venv/bin/python -m petstore.webserver &")
    assert "WEB_BIND" not in commands and "0.0.0.0" not in commands
    assert not re.search(r"^WEB_BIND=", (ROOT / ".env.example").read_text(), re.MULTILINE)


def test_the_production_block_installs_the_production_lock_then_the_project_alone():
    """Every package with its hashes, the build backend included: building the project
    downloads nothing (no build isolation, which would fetch setuptools unhashed)."""
    commands = "\n".join(production_blocks((ROOT / PRODUCTION_PAGE).read_text()))
    installs = [line.split("#")[0].split() for line in commands.splitlines() if " install " in line]
    assert installs == [
        [".venv/bin/pip", "install", "--quiet", "--require-hashes", "-r", "requirements/build.txt"],
        [
            ".venv/bin/pip",
            "install",
            "--quiet",
            "--require-hashes",
            "-r",
            "requirements/production.txt",
        ],
        [".venv/bin/pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "."],
    ]


def locked(lock: str) -> set[str]:
    """`name==version` of each package of a hashed lock that installs on this interpreter
    (its environment marker, if any, holds), names normalised as pip does."""
    pins = set()
    for line in lock.splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)\s*(?:;([^\\]*))?", line)
        if match and (not match[3] or Marker(match[3].strip()).evaluate()):
            pins.add(f"{canonicalize_name(match[1])}=={match[2]}")
    return pins


def frozen(venv: Path) -> set[str]:
    """`name==version` of every package installed in `venv` (`pip freeze --all`: setuptools
    too), the project and pip itself (the venv's own, from ensurepip) aside."""
    result = subprocess.run(
        [str(venv / "bin" / "pip"), "freeze", "--all"], capture_output=True, text=True, check=True
    )
    pins = set()
    for line in result.stdout.splitlines():
        name, _, version = line.partition("==")
        if canonicalize_name(name.split(" @ ")[0]) not in {"petstore", "pip"}:
            pins.add(f"{canonicalize_name(name)}=={version}")
    return pins


def test_the_marker_of_a_locked_package_decides_whether_it_is_expected():
    lock = (
        "tzdata==2026.6 ; sys_platform == 'win32' \\\n    --hash=sha256:00\n"
        "Django==5.2.19 \\\n    --hash=sha256:00\n"
        "psycopg-binary==3.3.9 ; implementation_name != 'pypy' \\\n"
    )
    assert locked(lock) == {"django==5.2.19", "psycopg-binary==3.3.9"}


@pytest.fixture
def fresh_database():
    """A new database on the test server (the machine's, or the run's own on its socket)."""
    name = f"petstore_readme_{os.getpid()}"
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield database_url(name)
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def redis_server(tmp_path):
    server = OwnRedis(tmp_path).start()
    yield server
    server.kill()


def test_the_production_block_serves_with_debug_off(tmp_path, fresh_database, redis_server):
    checkout = tmp_path / "checkout"
    copy_work_tree(checkout)
    # What `make run` leaves in a checkout: development settings, which production must ignore.
    (checkout / "var").mkdir(exist_ok=True)
    (checkout / "var" / "local.env").write_text("DEBUG=1\n")

    port, http_port = free_port(), free_port()
    (checkout / ".env").write_text(
        env_file_from_example(
            (checkout / ".env.example").read_text(),
            {
                "SECRET_KEY": secrets.token_urlsafe(50),
                "DOMAINS_KEY_ENCRYPTION_KEY": secrets.token_urlsafe(50),
                "DATABASE_URL": fresh_database,
                "REDIS_URL": redis_server.url(0),
                "CELERY_BROKER_URL": redis_server.url(1),
                "PORT": str(port),
                "HTTP_PORT": str(http_port),
                "HTTPS_PORT": str(free_port()),
                "EDGE_UPSTREAMS": f"127.0.0.1:{port}",
                "EDGE_CERTIFICATES_PORT": str(free_port()),
            },
        )
    )
    blocks = production_blocks((checkout / PRODUCTION_PAGE).read_text())
    assert len(blocks) == 2, "the production block: the commands, then the smoke test"
    script = checkout / "production.sh"
    script.write_text("set -e\n" + "\n".join(blocks))

    environment = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    environment.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    out, err = checkout / "stdout.txt", checkout / "stderr.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        shell = subprocess.Popen(
            ["bash", str(script)],
            cwd=checkout,
            env=environment,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # the shell and the processes it leaves running
        )
    try:
        returncode = shell.wait(timeout=600)
        output = out.read_text()
        assert returncode == 0, output + err.read_text()[-5000:]

        # The responses `curl -si` printed, in order: createPet, /readyz, then the dashboard's
        # API over plain HTTP through the edge.
        responses = re.findall(
            r"HTTP/1\.1 (\d{3}) [^\n]*\n.*?\n\n(.*?)(?=HTTP/1\.1 \d{3} |\Z)", output, re.DOTALL
        )
        assert [status for status, _ in responses] == ["201", "200", "301"], output
        assert "Location: https://app.petstore.example/v1/pets" in output
        assert '"name":"Rex"' in responses[0][1]
        assert '"status": "ok"' in responses[1][1]

        # The web processes the block started serve production pages, not DEBUG's.
        missing = requests.get(
            f"http://127.0.0.1:{port}/no-such-page",
            headers={"Host": "app.petstore.example", "X-Forwarded-Proto": "https"},
            timeout=10,
        )
        assert missing.status_code == 404
        assert "URLconf" not in missing.text
        assert "DEBUG = True" not in missing.text
        plain = requests.get(
            f"http://127.0.0.1:{port}/v1/pets",
            headers={"Host": "app.petstore.example"},
            allow_redirects=False,
            timeout=10,
        )
        assert plain.status_code == 301  # production's HTTPS redirect
        assert plain.headers["Location"] == "https://app.petstore.example/v1/pets"

        # Installed: exactly the production lock, names and versions, the build lock's
        # backend, and the project (not editable) beside them.
        lock = (checkout / "requirements" / "production.txt").read_text()
        build = (checkout / "requirements" / "build.txt").read_text()
        assert frozen(checkout / ".venv") == locked(lock) | locked(build)
        project = subprocess.run(
            [str(checkout / ".venv/bin/pip"), "show", "--files", "petstore"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert "petstore/webserver.py" in project and "Editable project location" not in project
    finally:
        try:
            os.killpg(shell.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                shell.wait(timeout=1)
            _wait_for_group_to_end(shell.pid)


def _wait_for_group_to_end(group: int, timeout: float = 20.0) -> None:
    """The web server and Celery stop on SIGTERM; whatever has not stopped in time is killed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
