"""What the fairness benchmarks share (bench/fairness.py: Verify, bench/fairness_webhooks.py:
webhook deliveries): the loopback DNS server in the benchmark's process, production's workers
started from Procfile.production, a project made afresh, and the limits they are judged by."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.environment import ENV, setup_django  # noqa: E402

setup_django(ENV)  # the models below need it

from django.contrib.auth import get_user_model  # noqa: E402

from bench.processes import purge_queue, stop, wait_for_worker  # noqa: E402
from devtools.devdns import DNSServer  # noqa: E402
from devtools.processes import spawn  # noqa: E402
from domains.models import Project, ProvenHostname  # noqa: E402
from domains.services.projects import deploy_record, project_create  # noqa: E402

# The victim's domains (or deliveries) per run.
DOMAINS = int(os.environ.get("BENCH_FAIRNESS_DOMAINS", "10"))
DOMAIN_LIMIT = 60.0  # seconds a victim's domain may take before the run is called broken
SPACING = 0.5  # seconds between two of the victim's domains, so the attack spans them all
TARGET = 1.5
# The workers' own: the certificate asked for at once.
FAIR_ENV = {**ENV, "DOMAINS_CERT_ISSUE_DELAY": "0"}


class Platform:
    """The loopback DNS server in this process and production's two workers; and a server
    that never answers on every loopback address (the wildcard address), where the workers
    ask a zone's own name servers (DOMAINS_DNS_AUTHORITATIVE_PORT): any zone's name servers
    are silent unless they have no address."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.dns = DNSServer("127.0.0.1", 0).start()
        self.silent = DNSServer("0.0.0.0", 0, silent=True).start()  # noqa: S104 - answers none
        self.processes: dict = {}

    def env(self) -> dict[str, str]:
        return {
            **FAIR_ENV,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PETSTORE_VAR_DIR": str(self.workdir / "var"),
            "DOMAINS_DNS_NAMESERVERS": self.dns.address,
            "DOMAINS_DNS_AUTHORITATIVE_PORT": str(self.silent.port),
            "DOMAINS_CA_DIR": str(self.workdir / "ca"),
        }

    def start_workers(self, lines: dict[str, str]) -> list[str]:
        purge_queue()
        started = []
        for name in lines:
            log_path = self.workdir / f"{name}.log"
            command = ["/bin/sh", "-c", "exec " + lines[name]]
            process = spawn(command, env=self.env(), log_path=log_path)
            self.processes[name] = process
            wait_for_worker(process, log_path)
            started.append(f"{name} `{lines[name]}`")
        return started

    def stop_workers(self) -> None:
        for name in list(self.processes):
            stop(self.processes.pop(name))
        purge_queue()

    def stop(self) -> None:
        self.stop_workers()
        self.dns.stop()
        self.silent.stop()


def make_project(slug: str, plan: str):
    Project.objects.filter(slug=slug).delete()
    ProvenHostname.objects.filter(registrable_domain=f"{slug}.test").delete()
    owner, _ = get_user_model().objects.get_or_create(username=slug)
    project = project_create(slug=slug, owner=owner, plan=plan, name=slug)
    deploy_record(project=project, html=f"<h1>{slug}</h1>")
    return project, owner
