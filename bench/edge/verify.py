"""Verify → the first HTTPS response with the new certificate: per scenario (a CA and the
worker's DOMAINS_CERT_ISSUE_DELAY), domains added and verified one after another while a
probe asks the edge for each until it answers with the project's page."""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from bench.edge.platform import Platform
from domains import tasks
from domains.choices import Plan
from domains.models import Certificate, Domain, Project, ProvenHostname
from domains.services.custom_domains import domain_add
from domains.services.projects import deploy_record, project_create

ZONE = "edge-bench.test"
SLUG = "edge-bench"
PAGE = "<h1>Edge bench</h1>"
DOMAINS = 20
PROBE_EVERY = 0.05  # seconds between the starts of two probe connections
DOMAIN_LIMIT = 120.0  # seconds; a domain not served by then counts as not served


@dataclass(frozen=True)
class Scenario:
    ca: str  # "local" or "acme"
    delay: str | None  # the worker's DOMAINS_CERT_ISSUE_DELAY; None: as in production

    @property
    def name(self) -> str:
        return f"{self.ca}-{'default' if self.delay is None else self.delay.replace('.', '_')}"

    @property
    def warm_up_hostname(self) -> str:
        """The domain that warms the scenario's worker, unmeasured."""
        return f"{self.name}-warm.{ZONE}"


@dataclass
class Timing:
    total: float  # Verify → the first verified HTTPS 200 with the page
    checked: float  # Verify → the check recorded (the worker's check_domain)
    stored: float  # Verify → the certificate stored (its row's created_at)


def https_get(port: int, hostname: str, context: ssl.SSLContext) -> tuple[int, str, str] | None:
    """GET / over a new TLS connection to the edge with `hostname` as SNI: status, body and
    the presented leaf's serial; None when the handshake fails (no certificate yet)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            # As browsers do: without it the request waits for the delayed ACK (~40 ms).
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with context.wrap_socket(raw, server_hostname=hostname) as tls:
                der = tls.getpeercert(binary_form=True)
                request = f"GET / HTTP/1.1\r\nHost: {hostname}\r\nConnection: close\r\n\r\n"
                tls.sendall(request.encode())
                response = http.client.HTTPResponse(tls)
                response.begin()
                body = response.read().decode(errors="replace")
    except OSError:  # ssl.SSLError too: the edge had no certificate for the name
        return None
    assert der is not None
    return response.status, body, format(x509.load_der_x509_certificate(der).serial_number, "x")


def fresh_project() -> tuple[Project, User]:
    """The bench project, the previous run's removed with what proved its names (a proven
    name would make every new claim contested: a TXT question more per check)."""
    Project.objects.filter(slug=SLUG).delete()
    ProvenHostname.objects.filter(registrable_domain=ZONE).delete()
    owner, _ = get_user_model().objects.get_or_create(username=SLUG)
    project = project_create(slug=SLUG, owner=owner, plan=Plan.ENTERPRISE, name=SLUG)
    deploy_record(project=project, html=PAGE)
    return project, owner


def _add(platform: Platform, project: Project, owner: User, hostname: str) -> Domain:
    """The domain's CNAME in the DNS, then Add domain: what the owner does before Verify."""
    platform.dns.add(hostname, "CNAME", settings.PLATFORM_CNAME_TARGET + ".")
    return domain_add(project=project, hostname=hostname, actor=owner)


def _warm_up(platform: Platform, project: Project, owner: User, hostname: str,
             root: Path) -> None:  # fmt: skip
    """One domain through Verify, unmeasured. The local CA is created by the first
    issuance, so its root is there only once this domain has its certificate."""
    domain = _add(platform, project, owner, hostname)
    tasks.request_check(domain=domain, actor=owner)
    deadline = time.monotonic() + DOMAIN_LIMIT
    while not Certificate.objects.filter(domain=domain).exists():
        if time.monotonic() > deadline:
            log = platform.log_path("worker").read_text(errors="replace")[-3000:]
            raise SystemExit(f"edge: {hostname} got no certificate:\n{log}")
        time.sleep(0.1)
    context = ssl.create_default_context(cafile=str(root))
    answer = https_get(platform.https_port, hostname, context)
    if answer is None or answer[:2] != (200, PAGE):
        raise SystemExit(f"edge: {hostname} is not served over HTTPS: {answer}")


def verify_to_https(platform: Platform, project: Project, owner: User, hostname: str,
                    root: Path) -> Timing | None:  # fmt: skip
    domain = _add(platform, project, owner, hostname)
    context = ssl.create_default_context(cafile=str(root))  # made first: it takes ~50 ms
    wall, started = time.time(), time.perf_counter()
    tasks.request_check(domain=domain, actor=owner)
    attempt = started
    while attempt - started < DOMAIN_LIMIT:
        answer = https_get(platform.https_port, hostname, context)
        if answer is not None and answer[:2] == (200, PAGE):
            total = time.perf_counter() - started
            break
        attempt += PROBE_EVERY
        time.sleep(max(0.0, attempt - time.perf_counter()))
    else:
        return None
    stored = Certificate.objects.get(domain=domain)
    if stored.serial != answer[2]:
        raise SystemExit(f"edge: {hostname} presented serial {answer[2]}, stored {stored.serial}")
    domain.refresh_from_db()
    assert domain.checked_at is not None
    checked = domain.checked_at.timestamp() - wall
    return Timing(total, checked, stored.created_at.timestamp() - wall)


def run_scenario(
    platform: Platform, project: Project, owner: User, scenario: Scenario,
    worker_env: dict[str, str], root: Path,
) -> list[Timing | None]:  # fmt: skip
    """The scenario's worker started, warmed with one domain; then DOMAINS timed."""
    delay = {} if scenario.delay is None else {"DOMAINS_CERT_ISSUE_DELAY": scenario.delay}
    platform.start_worker(**worker_env, **delay)
    timings: list[Timing | None] = []
    try:
        _warm_up(platform, project, owner, scenario.warm_up_hostname, root)
        for i in range(DOMAINS):
            hostname = f"{scenario.name}-{i:02d}.{ZONE}"
            timing = verify_to_https(platform, project, owner, hostname, root)
            timings.append(timing)
            shown = "not served" if timing is None else f"{timing.total:.2f} s"
            print(f"edge: {hostname} {shown}", flush=True)
    finally:
        platform.stop_worker()
    return timings


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s"


def latency_row(scenario: Scenario, timings: list[Timing | None], default_delay: float) -> str:
    ca = "local CA" if scenario.ca == "local" else "Pebble (ACME)"
    delay = f"{scenario.delay} s"
    if scenario.delay is None:
        told = "DOMAINS_CERT_ISSUE_DELAY" in os.environ
        delay = f"{default_delay:g} s ({'from the environment' if told else 'default'})"
    done = [t for t in timings if t is not None]
    if not done:
        return f"| {ca} | {delay} | none of {len(timings)} served | | | | | |"
    totals = sorted(t.total for t in done)
    p90 = statistics.quantiles(totals, n=10, method="inclusive")[8] if len(done) > 1 else totals[0]
    missed = f" ({len(timings) - len(done)} not served)" if len(done) < len(timings) else ""
    phases = (
        [t.checked for t in done],
        [t.stored - t.checked for t in done],
        [t.total - t.stored for t in done],
    )
    return (
        f"| {ca} | {delay} | **{_median(totals)}**{missed} | {p90:.2f} s | {totals[-1]:.2f} s | "
        + " | ".join(_median(phase) for phase in phases)
        + " |"
    )


def delay_share(results: dict[Scenario, list[Timing | None]]) -> list[str]:
    """What the issuance delay costs each CA: its default row against its row at 0."""
    notes = []
    for ca, name in (("local", "Local CA"), ("acme", "Pebble")):
        medians = {
            scenario.delay: statistics.median(done)
            for scenario, timings in results.items()
            if scenario.ca == ca and (done := [t.total for t in timings if t is not None])
        }
        if None in medians and "0" in medians:
            saved = medians[None] - medians["0"]
            notes.append(
                f"{name}: DOMAINS_CERT_ISSUE_DELAY at its default is {saved:.2f} s of the "
                f"{medians[None]:.2f} s median ({saved / medians[None]:.0%}); at 0 the median "
                f"is {medians['0']:.2f} s."
            )
    return notes
