"""`make soak`: a bounded soak on loopback, served as in production, that stops by itself.

Procfile.production's web line (granian) + a real Celery worker and beat + the loopback
DNS server, on a PostgreSQL database of its own (`soak`, recreated each run) and Redis DBs
12/13. A fixed-rate, open-loop load generator sends mixed list / create / get traffic
for SOAK_SECONDS (default 120) while domains are added and verified at a
steady pace. Then it checks what must hold and writes docs/soak.md:

- zero 5xx, zero connection errors or timeouts, zero 429 (the load stays under
  the production rate limits, which stay on);
- every 201 is a row with the name that was sent; the table holds nothing else;
  no name twice;
- every verified domain ends active with exactly one certificate;
- latency per operation (p50 / p95 / p99 / max).

Exit status 0 only if every check holds. A hard stop (SIGALRM) ends the run if
anything hangs; child processes are always stopped.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.processes import procfile_lines  # noqa: E402
from devtools.processes import spawn, stop_group  # noqa: E402
from devtools.sockets import free_port  # noqa: E402

SECONDS = float(os.environ.get("SOAK_SECONDS", "120"))
RATE = float(os.environ.get("SOAK_RATE", "30"))  # requests per second, all kinds
KEYS = int(os.environ.get("SOAK_KEYS", "6"))  # 5 req/s each: under 600/min per key
DOMAIN_EVERY = float(os.environ.get("SOAK_DOMAIN_EVERY", "3"))  # seconds between Verifies
PG_ADMIN_URL = os.environ.get("SOAK_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_NAME = "soak"
VAR = ROOT / "var" / "soak"
REPORT = ROOT / "docs" / "soak.md"
# "next" follows the last `Link: rel="next"` seen (a second page); every kind counts in RATE.
MIX = (("list", 0.45), ("next", 0.15), ("get", 0.25), ("create", 0.15))


PORT, DNS_PORT = free_port(), free_port()
BASE = f"http://127.0.0.1:{PORT}"
ENV = {
    "DJANGO_SETTINGS_MODULE": "petstore.settings",
    "PETSTORE_ENV_FILE": "",
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
    "REDIS_URL": os.environ.get("SOAK_REDIS_URL", "redis://127.0.0.1:6379/12"),
    "CELERY_BROKER_URL": os.environ.get("SOAK_BROKER_URL", "redis://127.0.0.1:6379/13"),
    "SECRET_KEY": "soak-only-not-secret",
    "DOMAINS_KEY_ENCRYPTION_KEY": "he8H5PNeHQEQfE3YFMNjWWUbBLKvmEWzsO8wvmSpQCA",  # not secret
    "DEBUG": "0",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "0",
    "DB_CONN_MAX_AGE": "600",
    "LOG_LEVEL": "WARNING",
    "DOMAINS_DNS_NAMESERVERS": f"127.0.0.1:{DNS_PORT}",
    "DOMAINS_CA_DIR": str(VAR / "ca"),
    "DOMAINS_CERT_ISSUE_DELAY": "1",
    # One domain every few seconds for the whole soak: past a project's hourly Add limit.
    "DOMAINS_ADD_PER_HOUR": "1000000",
    "DOMAINS_VERIFY_PER_HOUR": "1000000",
    # Its names live in `.test` zones served on loopback, as `make run`'s do.
    "DOMAINS_LOCAL_SUFFIXES": "test",
    "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8,::1",
    "PETSTORE_VAR_DIR": str(VAR),
}
os.environ.update(ENV)  # this process too: it seeds and checks through the ORM


def _prepare_database() -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT, env={**os.environ}, check=True, capture_output=True,
    )  # fmt: skip
    import redis

    for url in (ENV["REDIS_URL"], ENV["CELERY_BROKER_URL"]):
        redis.Redis.from_url(url).flushdb()


def _start(command: list[str], log_name: str, **env: str) -> subprocess.Popen:
    return spawn(command, env={**os.environ, **env}, log_path=VAR / log_name)


def _wait_http(url: str, timeout: float = 30) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {timeout}s")


class Load:
    """Open loop: request i is due at start + i / RATE, whatever earlier ones took."""

    def __init__(self, keys: list[str], category_ids: list[int], seeded: set[int]):
        self.keys, self.category_ids, self.seeded = keys, category_ids, sorted(seeded)
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.statuses: Counter = Counter()
        self.errors: Counter = Counter()
        self.created: dict[int, str] = {}
        self.sent_names: list[str] = []
        self.lock = threading.Lock()
        self.names = itertools.count()
        self.local = threading.local()
        self.late = 0
        self.next_url: str | None = None

    def _session(self):
        import requests

        if not hasattr(self.local, "session"):
            self.local.session = requests.Session()
        return self.local.session

    def one(self, kind: str, key: str) -> None:
        headers = {"Authorization": f"Bearer {key}"}
        session, started = self._session(), time.perf_counter()
        name = None
        try:
            if kind == "list":
                params = {"limit": random.choice([5, 20, 100])}
                if random.random() < 0.3:
                    params["status"] = random.choice(["available", "pending", "sold"])
                response = session.get(
                    BASE + "/v1/pets", params=params, headers=headers, timeout=10
                )
                if response.status_code == 200 and "next" in response.links:
                    self.next_url = response.links["next"]["url"]
            elif kind == "next":
                url = self.next_url or BASE + "/v1/pets"
                response = session.get(url, headers=headers, timeout=10)
            elif kind == "get":
                with self.lock:
                    known = self.seeded + list(self.created)
                response = session.get(
                    BASE + f"/v1/pets/{random.choice(known)}", headers=headers, timeout=10
                )
            else:
                name = f"soak-{next(self.names)}"
                body = {"name": name, "categoryId": random.choice(self.category_ids)}
                with self.lock:
                    self.sent_names.append(name)
                response = session.post(BASE + "/v1/pets", json=body, headers=headers, timeout=10)
        except Exception as exc:  # noqa: BLE001 - counted and reported, never hidden
            with self.lock:
                self.errors[f"{kind}: {type(exc).__name__}"] += 1
            return
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latency[kind].append(elapsed)
            self.statuses[(kind, response.status_code)] += 1
            if kind == "create" and response.status_code == 201:
                self.created[response.json()["id"]] = name

    def run(self, seconds: float) -> None:
        kinds, weights = zip(*MIX, strict=True)
        total = int(seconds * RATE)
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=64) as pool:
            for i in range(total):
                due = start + i / RATE
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                elif pause < -0.5:
                    self.late += 1
                kind = random.choices(kinds, weights)[0]
                pool.submit(self.one, kind, self.keys[i % len(self.keys)])


def _verify_domains(stop: threading.Event, dns, owner, added: list) -> None:
    from domains import services
    from domains.models import Project

    project = Project.objects.get(slug="soak")
    for n in itertools.count():
        if stop.wait(DOMAIN_EVERY if n else 0):
            return
        hostname = f"d{n}.example.test"
        dns.add(hostname, "CNAME", "domains.petstore.localhost.")
        domain = services.domain_add(project=project, hostname=hostname, actor=owner)
        services.domain_request_check(domain=domain, actor=owner)  # queued on commit
        added.append(domain.pk)


def _percentiles(values: list[float]) -> str:
    if not values:
        return "| - | - | - | - |"
    ordered = sorted(values)
    q = (
        statistics.quantiles(ordered, n=100, method="inclusive")
        if len(ordered) > 1
        else ordered * 99
    )

    def ms(v: float) -> str:
        return f"{v * 1000:.1f}"

    return f"| {ms(q[49])} | {ms(q[94])} | {ms(q[98])} | {ms(ordered[-1])} |"


def _hard_stop(*_) -> None:
    raise SystemExit("soak: hard stop, something hung")


def main() -> int:
    VAR.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGALRM, _hard_stop)
    signal.alarm(int(SECONDS) + 240)
    _prepare_database()

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db.models import Count

    from devtools.devdns import DNSServer
    from domains import services
    from domains.models import Domain
    from pets.models import Category, Pet
    from pets.services import demo_categories_load
    from petstore.apikeys.services import api_key_issue
    from petstore.models import TaskFailure

    demo_categories_load()
    owner = get_user_model().objects.create_user("soak")
    keys = [api_key_issue(user=owner, name=f"soak-{i}").plaintext for i in range(KEYS)]
    category_ids = list(Category.objects.values_list("pk", flat=True))
    project = services.project_create(slug="soak", owner=owner, plan="pro", name="Soak")
    services.deploy_record(project=project, html="<h1>Soak</h1>")
    seeded = {
        pet.pk
        for pet in Pet.objects.bulk_create(
            Pet(name=f"seed-{i}", category_id=category_ids[i % len(category_ids)])
            for i in range(200)
        )
    }

    dns = DNSServer("127.0.0.1", DNS_PORT).start()
    dns.add("domains.petstore.localhost", "A", "192.0.2.80")
    processes = [
        _start(
            ["/bin/sh", "-c", "exec " + procfile_lines()["web"]],  # as in production
            "web.log",
            PORT=str(PORT),
            WEB_CONCURRENCY="3",
        ),
        _start(
            [sys.executable, "-m", "celery", "-A", "petstore", "worker", "--loglevel", "INFO",
             "--concurrency", "2", "--without-gossip", "--without-mingle", "-n", "soak@%h"],
            "worker.log",
        ),
        # Beat, as in production: its sweep re-queues any check whose message was lost.
        _start(
            [sys.executable, "-m", "celery", "-A", "petstore", "beat", "--loglevel", "WARNING"],
            "beat.log",
        ),
    ]  # fmt: skip
    stop, added = threading.Event(), []
    try:
        _wait_http(BASE + "/healthz")
        load = Load(keys, category_ids, seeded)
        verifier = threading.Thread(target=_verify_domains, args=(stop, dns, owner, added))
        verifier.start()
        started, load_before = time.monotonic(), os.getloadavg()[0]
        load.run(SECONDS)
        stop.set()
        verifier.join()
        duration = time.monotonic() - started
        # Let the last verifications and certificates finish (bounded: past one sweep).
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if not Domain.objects.filter(pk__in=added).exclude(state="active").exists():
                break
            time.sleep(1)
    finally:
        stop.set()
        for process in processes:
            stop_group(process, graceful=15)
        dns.stop()

    rows = dict(Pet.objects.values_list("pk", "name"))
    duplicates = list(
        Pet.objects.values("name").annotate(n=Count("pk")).filter(n__gt=1).values_list("name", "n")
    )
    missing = {pk: name for pk, name in load.created.items() if rows.get(pk) != name}
    extra = set(rows) - set(load.created) - seeded
    server_errors = sum(n for (_, status), n in load.statuses.items() if status >= 500)
    throttled = sum(n for (_, status), n in load.statuses.items() if status == 429)
    domains = Domain.objects.filter(pk__in=added).annotate(certs=Count("certificates"))
    active = sum(1 for d in domains if d.state == "active" and d.certs == 1)
    failures = list(TaskFailure.objects.values_list("task_name", "kind", "count"))
    requests_sent = sum(len(v) for v in load.latency.values()) + sum(load.errors.values())

    # Each Verify queues one check; fewer received by our worker means another process
    # consumed from this broker (the sweep then re-queues them, see "pending" below).
    worker_log = (VAR / "worker.log").read_text(errors="replace").splitlines()
    received = sum(1 for line in worker_log if "check_domain[" in line and "received" in line)
    pending = sum(1 for d in domains if d.state != "active")
    checks = {
        "zero 5xx": server_errors == 0,
        "zero connection errors or timeouts": not load.errors,
        "zero 429 (load under the limits)": throttled == 0,
        "every 201 is a row with its name": not missing,
        "no row without its 201": not extra,
        "no duplicate rows": not duplicates,
        "every verified domain active with one certificate": active == len(added),
    }
    lines = [
        "# Soak: last figures",
        "",
        "Written by `make soak` (bench/soak.py); see the module docstring for the set-up.",
        "",
        f"- Run: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} CPUs; "
        f"{duration:.0f} s of load at {RATE:g} req/s over {KEYS} keys "
        f"(mix {', '.join(f'{k} {w:.0%}' for k, w in MIX)}), "
        "the web server as in production (granian, 3 workers), "
        "one Celery worker (2 processes) and beat, "
        "loopback DNS; production settings (rate limits on, health-checked persistent "
        "connections).",
        f"- Requests: {requests_sent} sent, {load.late} started more than 0.5 s late.",
        "- Machine load (1-minute average) at the start and end: "
        f"{load_before:.2f} and {os.getloadavg()[0]:.2f}; the machine is shared, so other work "
        "running at the same time shows in the tail latencies.",
        f"- Statuses: {', '.join(f'{k} {s}: {n}' for (k, s), n in sorted(load.statuses.items()))}.",
        f"- Errors: {dict(load.errors) or 'none'}.",
        f"- Pets: {len(seeded)} seeded, {len(load.created)} created (201), {len(rows)} rows, "
        f"{len(missing)} missing, {len(extra)} unexpected, {len(duplicates)} duplicated.",
        f"- Domains: {len(added)} verified during the load, {active} active with one certificate, "
        f"{pending} not active; {received} check messages received by the worker (including "
        "sweep re-queues and retries).",
        f"- Task failures: {failures or 'none'}.",
        "",
        "| operation | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|",
        *(f"| {kind} {_percentiles(load.latency[kind])}" for kind, _ in MIX),
        "",
        "| check | result |",
        "|---|---|",
        *(f"| {name} | {'pass' if ok else 'FAIL'} |" for name, ok in checks.items()),
        "",
    ]
    REPORT.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
