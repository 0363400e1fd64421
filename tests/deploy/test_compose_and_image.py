"""The deploy files a deployer starts with: compose.yaml's services and their order, the
Dockerfile and Procfile.production. Docker cannot run here, so their structure is checked."""

from __future__ import annotations

import http.server
import importlib
import ipaddress
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from typing import Any

import pytest
import yaml

from domains.channels import CHANNELS
from petstore.celery import app
from petstore.ports import DEFAULT_PORT
from tests.petstore.test_configuration_documented import code_variables, env_example_variables
from tests.processes import ROOT

APP_SERVICES = ("release", "web", "edge", "worker", "certificates", "webhooks", "beat", "backup")
# The launcher without its access lines: the edge in front writes them (domains/edge/caddy.py).
# `env` rather than the shell's `NAME=value`, so the line runs the same through a shell (`exec`
# included), as an argv (compose, the image) and under systemd.
PRODUCTION_WEB_LINE = "env WEB_ACCESS_LOG=0 python -m petstore.webserver"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_runs_web_edge_worker_beat_postgresql_and_redis(compose):
    services = compose["services"]
    assert set(services) == {"db", "redis", *APP_SERVICES}
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    for name in APP_SERVICES:
        assert services[name]["build"] == ".", name
    commands = {name: services[name]["command"] for name in APP_SERVICES}
    assert commands["release"] == ["python", "manage.py", "migrate", "--noinput"]
    # Procfile.production's web line, its environment included (below).
    assert commands["web"] == shlex.split(PRODUCTION_WEB_LINE)
    assert commands["worker"][:4] == ["celery", "-A", "petstore", "worker"]
    assert commands["certificates"][:4] == ["celery", "-A", "petstore", "worker"]
    assert commands["beat"][:4] == ["celery", "-A", "petstore", "beat"]
    assert commands["edge"] == ["python", "manage.py", "edge"]
    assert "python manage.py backup " in commands["backup"][-1]
    # Only the edge is published; the web processes are reached through it.
    assert services["edge"]["ports"] == ["80:80", "443:443"]
    assert "ports" not in services["web"]
    assert {name for name, service in services.items() if "ports" in service} == {"edge"}


def test_every_app_service_reads_env_file_and_uses_compose_own_database_and_redis(compose):
    listed, _ = env_example_variables()
    for name in APP_SERVICES:
        service = compose["services"][name]
        assert service["env_file"] == ".env", name
        environment = service["environment"]
        assert environment["DATABASE_URL"].endswith("@db:5432/petstore"), name
        assert environment["REDIS_URL"].startswith("redis://redis:6379/"), name
        assert environment["CELERY_BROKER_URL"].startswith("redis://redis:6379/"), name
        assert set(environment) <= code_variables() & listed, name


def test_only_the_edge_reaches_web_on_an_internal_network_whose_subnet_is_trusted(compose):
    services = compose["services"]
    upstream = compose["networks"]["upstream"]
    assert upstream["internal"] is True  # no route out, nothing published
    subnet = ipaddress.ip_network(upstream["ipam"]["config"][0]["subnet"])
    on_upstream = {
        name for name, service in services.items() if "upstream" in service.get("networks", ())
    }
    assert on_upstream == {"web", "edge"}
    # The edge asks for web by the alias it has on `upstream` only, so its requests come
    # from its address there, never from the default network's.
    alias = services["web"]["networks"]["upstream"]["aliases"][0]
    assert "default" in services["web"]["networks"]  # the database and Redis
    environment = services["web"]["environment"]
    assert environment["EDGE_UPSTREAMS"] == f"{alias}:{environment['PORT']}"
    assert alias != "web"
    assert [ipaddress.ip_network(n) for n in environment["TRUSTED_PROXIES"].split(",")] == [subnet]
    # Every address of the container, so the edge's on `upstream`, on the port it names.
    assert environment["WEB_BIND"] == "0.0.0.0"


def test_compose_and_the_image_serve_web_on_the_settings_default_port(compose):
    """petstore/ports.py declares the web port; the files that cannot read Python hold
    copies, kept equal here, and the health checks read it (the image's) or PORT (compose's)."""
    web = compose["services"]["web"]
    assert web["environment"]["PORT"] == str(DEFAULT_PORT)
    assert web["environment"]["EDGE_UPSTREAMS"].rpartition(":")[2] == str(DEFAULT_PORT)
    assert web["expose"] == [str(DEFAULT_PORT)]
    assert "os.environ['PORT']" in web["healthcheck"]["test"][-1]
    _, image = dockerfile_stages()
    assert [line for line in image if line.startswith("EXPOSE ")] == [f"EXPOSE {DEFAULT_PORT}"]
    (healthcheck,) = [line for line in image if line.startswith("HEALTHCHECK ")]
    assert "from petstore.ports import DEFAULT_PORT" in healthcheck
    # No other copy of the number in the files that start the service: the copies above.
    copies = {"Dockerfile": 1, "compose.yaml": 2, "petstore/Procfile": 0}
    for name, count in copies.items():
        text = (ROOT / name).read_text()
        assert len(re.findall(rf"\b{DEFAULT_PORT}\b", text)) == count, name


def test_compose_starts_on_any_kernel_and_zero_reset_restarts_are_an_override(compose):
    """net.ipv4.tcp_migrate_req (Linux 5.14+) in compose.yaml would stop web from starting on
    an older kernel: it is in compose.zero-reset.yaml, which sets it for web alone."""
    override = yaml.safe_load((ROOT / "compose.zero-reset.yaml").read_text())
    assert set(override["services"]) == {"web"}
    # Connections queued at a replaced worker's socket move to another (Linux's SO_REUSEPORT).
    assert override["services"]["web"] == {"sysctls": ["net.ipv4.tcp_migrate_req=1"]}
    # compose.yaml sets no sysctl a kernel may lack (the edge's is Linux 4.11's).
    sysctls = {name: s["sysctls"] for name, s in compose["services"].items() if "sysctls" in s}
    assert sysctls == {"edge": ["net.ipv4.ip_unprivileged_port_start=0"]}


def _seconds(duration: str) -> int:
    assert duration.endswith("s") and duration[:-1].isdigit(), duration
    return int(duration[:-1])


def test_the_edge_waits_for_web_a_bounded_time(compose):
    """The edge starts once web is healthy; web's health check turns it unhealthy within its
    start period and a few failed checks, so `up` fails instead of waiting forever."""
    assert compose["services"]["edge"]["depends_on"]["web"] == {"condition": "service_healthy"}
    check = compose["services"]["web"]["healthcheck"]
    bound = _seconds(check["start_period"]) + check["retries"] * (
        _seconds(check["interval"]) + _seconds(check["timeout"])
    )
    assert _seconds(check["start_period"]) >= 30  # a slow start is not a failure
    assert bound <= 180


def test_the_web_edge_worker_and_beat_start_after_migrate_on_healthy_services(compose):
    services = compose["services"]
    for name in ("db", "redis", "web"):
        assert services[name]["healthcheck"]["test"][0] == "CMD", name
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    for name in ("web", "edge", "worker", "certificates", "beat"):
        depends = services[name]["depends_on"]
        assert depends["release"] == {"condition": "service_completed_successfully"}, name
        assert depends["db"] == {"condition": "service_healthy"}, name
        assert depends["redis"] == {"condition": "service_healthy"}, name
    assert services["edge"]["depends_on"]["web"] == {"condition": "service_healthy"}
    release = services["release"]
    assert release["restart"] == "no"
    assert set(release["depends_on"]) == {"db", "redis"}


def test_only_the_certificates_worker_and_the_edge_get_the_key_that_opens_private_keys(compose):
    """env_file gives every service all of .env; the others' environment blanks the key (the
    checks worker never opens a private key)."""
    for name in APP_SERVICES:
        environment = compose["services"][name]["environment"]
        for variable in ("DOMAINS_KEY_ENCRYPTION_KEY", "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS"):
            if name in ("certificates", "edge"):
                assert environment[variable].startswith(f"${{{variable}:"), (name, variable)
            else:
                assert environment[variable] == "", (name, variable)


def test_the_image_is_built_without_the_key_that_opens_private_keys():
    assert "DOMAINS_KEY_ENCRYPTION_KEY" not in (ROOT / "Dockerfile").read_text()


def test_the_platform_ca_survives_a_container_restart(compose):
    services = compose["services"]
    for name in ("web", "certificates"):  # the page shows the root; the worker issues
        assert "ca:/app/var/ca" in services[name]["volumes"], name
    assert {"postgres", "ca"} <= set(compose["volumes"])


def dockerfile_stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuation lines joined), one list per stage."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if not line or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            stages.append([])
        stages[-1].append(line)
    return stages


def test_the_health_checks_ask_the_web_port_the_settings_read(compose):
    """The image's and compose's checks, run as Docker runs them (with the service's
    environment), against a server on PORT: a wrong port or import fails them."""
    _, image = dockerfile_stages()
    (healthcheck,) = [line for line in image if line.startswith("HEALTHCHECK ")]
    image_check = json.loads(healthcheck.partition(" CMD ")[2])
    compose_check = compose["services"]["web"]["healthcheck"]["test"][1:]
    asked: list[str] = []

    class Probe(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Probe) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env = {"PATH": os.environ["PATH"], "PORT": str(server.server_address[1])}
        for check in (image_check, compose_check):
            subprocess.run([sys.executable, *check[1:]], cwd=ROOT, env=env, check=True, timeout=30)
        server.shutdown()
    assert asked == ["/healthz", "/readyz"]


# The base image, by tag or (once Renovate has pinned it) by digest.
BASE_IMAGE = re.compile(r"python:3\.11-slim(@sha256:[0-9a-f]{64})?")


def test_the_image_installs_the_production_lock_in_a_layer_of_its_own_before_the_code():
    dependencies, image = dockerfile_stages()
    base, alias = dependencies[0].removeprefix("FROM ").split(" AS ")
    assert BASE_IMAGE.fullmatch(base) and alias == "dependencies"
    # The runtime lock and the build backend's, every package with its hashes.
    assert (
        "RUN /venv/bin/pip install --require-hashes -r /tmp/build.txt -r /tmp/production.txt"
        in dependencies
    )
    # Nothing of the code in the dependencies' stage: the layer changes with the locks only.
    assert [line for line in dependencies if line.startswith("COPY")] == [
        "COPY requirements/build.txt requirements/production.txt /tmp/"
    ]
    assert BASE_IMAGE.fullmatch(image[0].removeprefix("FROM "))
    copied = image.index("COPY --from=dependencies /venv /venv")
    code = [i for i, line in enumerate(image) if line.startswith("COPY ") and i != copied]
    assert code and copied < min(code)
    # Then the project, not editable, without a dependency of its own choosing, built by the
    # locked backend: build isolation would download setuptools without a hash.
    (install,) = [line for line in image if " pip install" in line or "RUN pip" in line]
    assert install.startswith("RUN pip install --no-deps --no-build-isolation . ")
    assert " -e " not in install
    assert any("collectstatic --noinput" in line for line in image)


# The base image's Debian (13) ships PostgreSQL 17's client as `postgresql-client`.
IMAGE_PG_DUMP_MAJOR = 17


def test_the_image_has_a_pg_dump_for_compose_postgresql_so_the_backup_service_runs(compose):
    _, image = dockerfile_stages()
    [install] = [line for line in image if "apt-get install" in line]
    assert "postgresql-client" in install.split() and "--no-install-recommends" in install
    assert install.endswith("rm -rf /var/lib/apt/lists/*")
    assert image.index(install) < image.index("USER petstore")
    # pg_dump refuses a server newer than itself.
    db_major = int(compose["services"]["db"]["image"].partition(":")[2])
    assert db_major <= IMAGE_PG_DUMP_MAJOR


def test_the_image_runs_the_web_server_as_a_non_root_user_with_a_health_check():
    _, image = dockerfile_stages()
    users = [line for line in image if line.startswith("USER ")]
    assert users == ["USER petstore"]
    cmd = next(i for i, line in enumerate(image) if line.startswith("CMD "))
    assert image.index("USER petstore") < cmd
    assert image[cmd] == "CMD " + json.dumps(shlex.split(PRODUCTION_WEB_LINE))
    (healthcheck,) = [line for line in image if line.startswith("HEALTHCHECK ")]
    # slim has no curl: Python asks the web port's /healthz.
    assert 'CMD ["python", "-c"' in healthcheck and "/healthz" in healthcheck


def test_dockerignore_keeps_secrets_and_local_state_out_of_the_image():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".env", ".git", ".venv", "var"} <= ignored


def test_production_procfile_migrates_on_release_and_runs_web_worker_beat():
    lines = dict(
        line.split(": ", 1) for line in (ROOT / "Procfile.production").read_text().splitlines()
    )
    assert lines["release"] == "python manage.py migrate --noinput"
    # Configured by the environment (petstore/webserver.py): loopback unless WEB_BIND says.
    assert lines["web"] == PRODUCTION_WEB_LINE
    assert lines["worker"].startswith("celery -A petstore worker")
    assert lines["beat"].startswith("celery -A petstore beat")
    assert lines["edge"] == "python manage.py edge"


def _queues(command: list[str]) -> str:
    return command[command.index("-Q") + 1]


# What the worker imports (autodiscovery of the installed apps' tasks modules).
TASK_MODULES = ("domains.tasks", "petstore.tasks")


def our_tasks() -> list[Any]:
    """Every task of ours the worker registers (the app's tasks, Celery's own left out)."""
    for module in TASK_MODULES:
        importlib.import_module(module)
    return [task for name, task in app.tasks.items() if not name.startswith("celery.")]


def test_every_task_keeps_the_settings_defaults_and_names_a_queue_the_workers_consume(settings):
    tasks = {task.name: task for task in our_tasks()}
    assert {"domains.tasks.check_domain", "domains.tasks.issue_certificate"} <= tasks.keys()
    for task in tasks.values():
        assert task.acks_late is True and task.ignore_result is True, task.name
    assert tasks["domains.tasks.check_domain"].queue == settings.CHECKS_QUEUE
    assert tasks["domains.tasks.renew_certificates"].queue == settings.CERTIFICATES_QUEUE


def test_each_queue_has_a_worker_of_its_own_in_every_deploy_file(compose, settings):
    """A slow check never sits in front of certificate work: production starts one worker
    per queue, and every routed task goes to a queue one of them consumes."""
    queues = {settings.CHECKS_QUEUE, settings.CERTIFICATES_QUEUE, settings.WEBHOOKS_QUEUE}
    named = {
        getattr(task, "queue", None) or settings.CELERY_TASK_DEFAULT_QUEUE for task in our_tasks()
    }
    assert named | {channel.queue for channel in CHANNELS.values()} == queues
    procfile = dict(
        line.split(": ", 1) for line in (ROOT / "Procfile.production").read_text().splitlines()
    )
    services = compose["services"]
    for commands in (
        {name: procfile[name].split() for name in ("worker", "certificates", "webhooks")},
        {name: services[name]["command"] for name in ("worker", "certificates", "webhooks")},
    ):
        assert _queues(commands["worker"]) == settings.CHECKS_QUEUE
        assert _queues(commands["certificates"]) == settings.CERTIFICATES_QUEUE
        assert _queues(commands["webhooks"]) == settings.WEBHOOKS_QUEUE
        # The checks wait for the DNS: one process holds many of them in threads.
        assert commands["worker"][commands["worker"].index("--pool") + 1] == "threads"
