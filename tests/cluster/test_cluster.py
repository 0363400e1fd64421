"""The platform as production runs it, twice over, through faults.

Every process is started from its Procfile.production line, on a PostgreSQL cluster and a
Redis server of the test's own (so it can stop and start them): two web processes, two
edge nodes (`EDGE_UPSTREAMS` naming both web processes), two of each worker line that
does domain work (`worker`: checks; `certificates`), one beat, Pebble as the ACME CA
(reaching the edges' port 80 through a TCP balancer, as Let's Encrypt reaches an L4 load
balancer) and the loopback DNS server. The webhooks line is left out: no endpoint exists
here, so its queue would carry nothing.

While 50 domains go from Add to Active through ACME and 8 API clients create pets with an
Idempotency-Key through the edges (a request cut by a fault is sent again with its key),
the test SIGKILLs a certificates worker mid-order and starts it again, crashes PostgreSQL
(SIGKILL of the postmaster and its backends, on a cluster that acknowledges a commit only
once its WAL is written) and starts it again (the web processes answer 503 on /readyz
meanwhile and recover by themselves), SIGKILLs a web process and an edge node and starts
them again, and restarts Redis empty.

Then: every domain is Active with exactly one stored certificate, served by both edges
with the serial `domainstatus` prints, and none needed the test to press Re-verify (a
validation the CA could not make while a fault was on is retried by the platform); Pebble
placed one order per domain; every 201 is exactly one row, each retry of a key got the same
id and every replay a 201 saying `Idempotent-Replayed: true`; no answer was a 5xx or a
failed connection except while PostgreSQL was down, to the edge node while it was dead, or
in the web process the instant it was killed; no process exited but those the test killed.
The figures are printed (`pytest -s`) and in docs/decisions/reliability.md.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from devtools.sockets import free_port
from devtools.tlsfiles import throwaway_ca_files
from tests.cluster.load import RETRY_FOR, Answer, Api, PetClient, Tally, add_and_verify
from tests.cluster.probes import DOMAINSTATUS, in_flight_issuance, presented_serial, query
from tests.cluster.services import (
    API_HOST,
    DATABASE,
    Balancer,
    Platform,
    PrivatePostgres,
    Service,
    Supervisor,
    elapsed_since,
    production_command,
    start,
)
from tests.fixtures.domains import TARGET
from tests.fixtures.pebble import Pebble
from tests.processes import ROOT, OwnRedis, service_env, wait_for

pytestmark = [pytest.mark.acme]

DOMAINS = 50
CLIENTS = 8
# Beat's sweep every 5 s, tasks limited to 60 s, 10 s for Pebble to validate or sign (about 2 s
# here): a check lost with its message (a killed worker's, Redis restarted empty) is queued
# again after its claim's 65 s lease; certificate work 40 s after its last run began.
SWEEP_INTERVAL = 5
TASK_TIME_LIMIT = 60
ACME_WAIT = 10


# --- the services ------------------------------------------------------------------


@pytest.fixture
def balancer() -> Iterator[Balancer]:
    server = Balancer()
    yield server
    server.stop()


@pytest.fixture
def acme_http_port(balancer: Balancer) -> int:
    """Pebble's HTTP-01 requests go to the balancer in front of both edges' HTTP ports."""
    return balancer.port


@pytest.fixture
def postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        server.start()
        server.create_database(DATABASE)
        yield server
    finally:
        server.remove()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path).start()
    yield server
    server.kill()


@pytest.fixture
def platform(
    settings, pebble: Pebble, dns_server, balancer, postgres, redis_server, tmp_path
) -> Iterator[Platform]:
    api_ca, api_cert, api_key = throwaway_ca_files(
        tmp_path, [API_HOST], ca_name="Cluster test platform CA"
    )
    keyholder = service_env(
        settings,
        DATABASE_URL=postgres.url(DATABASE),
        REDIS_URL=redis_server.url(0),
        CELERY_BROKER_URL=redis_server.url(1),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        ALLOWED_HOSTS=f"{API_HOST},127.0.0.1",
        DASHBOARD_HOST=API_HOST,
        API_RATE_LIMIT="",
        API_ADDRESS_RATE_LIMIT="",
        # Production's resolver timings: the loopback server answers a busy test process.
        DOMAINS_DNS_TIMEOUT="2",
        DOMAINS_DNS_LIFETIME="5",
        DOMAINS_CERT_ISSUE_DELAY="1",
        DOMAINS_ACME_WAIT=str(ACME_WAIT),
        DOMAINS_SWEEP_INTERVAL=str(SWEEP_INTERVAL),
        CELERY_TASK_TIME_LIMIT=str(TASK_TIME_LIMIT),
        CELERY_TASK_SOFT_TIME_LIMIT=str(TASK_TIME_LIMIT - 10),
        EDGE_PLATFORM_CERTIFICATE=str(api_cert),
        EDGE_PLATFORM_KEY=str(api_key),
        PETSTORE_VAR_DIR=str(tmp_path / "var"),
    )
    # As the production block (docs/operators/production.md): only the certificates worker
    # and the edge hold the key.
    plain = {k: v for k, v in keyholder.items() if not k.startswith("DOMAINS_KEY_ENCRYPTION")}
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "var").mkdir()  # beat's schedule file
    web_ports = [free_port(), free_port()]
    webs = [
        Service(f"web-{i + 1}", production_command("web"), {**plain, "PORT": str(port)}, logs)
        for i, port in enumerate(web_ports)
    ]
    upstreams = ",".join(f"127.0.0.1:{port}" for port in web_ports)
    edges, https_ports = [], []
    for i in range(2):
        http_port, https_port = free_port(), free_port()
        balancer.targets.append(http_port)
        https_ports.append(https_port)
        admin = Path(tempfile.mkdtemp(prefix="edge-")) / "admin.sock"
        env = {
            **keyholder,
            "HTTP_PORT": str(http_port),
            "HTTPS_PORT": str(https_port),
            "EDGE_CERTIFICATES_PORT": str(free_port()),
            "EDGE_UPSTREAMS": upstreams,
            "EDGE_ADMIN": f"unix/{admin}",
            "PETSTORE_VAR_DIR": str(tmp_path / f"edge-{i + 1}"),
        }
        edges.append(Service(f"edge-{i + 1}", production_command("edge"), env, logs))
    checks = [Service(f"checks-{n}", production_command("worker", n), plain, logs) for n in (1, 2)]
    certificates = [
        Service(f"certificates-{n}", production_command("certificates", n), keyholder, logs)
        for n in (1, 2)
    ]
    beat = Service("beat", production_command("beat"), plain, logs)
    platform = Platform(
        keyholder, webs, web_ports, edges, https_ports, checks, certificates, beat, api_ca
    )
    release = subprocess.run(  # noqa: S603
        ["/bin/sh", "-c", production_command("release")],
        cwd=ROOT, env=keyholder, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert release.returncode == 0, release.stderr[-3000:]
    try:
        start(platform, *platform.services())
        platform.supervisor = Supervisor(platform.services())
        yield platform
    finally:
        if platform.supervisor is not None:
            platform.supervisor.stop()
        # All at once: each gets its grace period side by side, not one after another.
        with ThreadPoolExecutor(len(platform.services())) as stopping:
            list(stopping.map(Service.stop, platform.services()))
        for service in platform.edges:
            Path(service.env["EDGE_ADMIN"].removeprefix("unix/")).parent.rmdir()


# --- the faults ------------------------------------------------------------------------


@pytest.mark.timeout(480)
def test_the_platform_twice_over_through_faults(
    platform: Platform, pebble: Pebble, dns_server, postgres, redis_server, capsys, tmp_path
):
    began = time.monotonic()
    figures: dict[str, Any] = {}
    dns_server.remove(TARGET)
    dns_server.add(TARGET, "A", "127.0.0.1")  # the edges (through the balancer) are here
    category = int(platform.manage("loaddemo").split()[1])  # "Category <id> <name>: ..."
    platform.manage("createproject", "shop", "--owner", "alice", "--plan", "business", "--deployed")
    token = platform.manage("createapikey", "alice").splitlines()[-1]
    tally = Tally()
    stop = threading.Event()
    clients = [
        threading.Thread(
            target=PetClient(platform, token, tally, n % 2).run,
            args=(n, stop, category),
            daemon=True,
        )
        for n in range(CLIENTS)
    ]
    hostnames = [f"shop{n}.cluster.test" for n in range(DOMAINS)]
    owner = Api(platform, token, tally, 0)
    adding = threading.Thread(
        target=add_and_verify, args=(owner, hostnames, dns_server, 0.4), daemon=True
    )
    load_began = time.monotonic()
    for thread in [*clients, adding]:
        thread.start()

    # 1. A certificates worker SIGKILLed mid-order: once Pebble validates challenges, the
    # worker holding unfinished issue tasks dies with its orders placed and answered.
    wait_for(lambda: len(pebble.validations()) >= 3, timeout=60, interval=0.02,
             what="Pebble to validate challenges")  # fmt: skip

    def mid_order() -> tuple[Service, int, int] | None:
        """A worker holding issue tasks while orders are open (placed, not yet stored)."""
        victim = max(platform.certificates, key=in_flight_issuance)
        held = in_flight_issuance(victim)
        orders_open = query(postgres, "SELECT count(*) FROM domains_acmeorder")[0][0]
        return (victim, held, orders_open) if held and orders_open else None

    victim, held, orders_open = wait_for(
        mid_order, timeout=30, interval=0.02, what="a worker in the middle of an order"
    )
    victim.kill()
    figures.update(worker_killed_at=elapsed_since(load_began), worker_in_flight_at_kill=held)
    figures["orders_open_at_kill"] = orders_open
    start(platform, victim)

    # 2. PostgreSQL crashed and started again: /readyz answers 503 while it is down, 200
    # again by itself, and no commit it acknowledged is lost. It comes early (when an outage
    # left idempotency keys claimed for 60 s, that wait passed during the other faults; now
    # an outage leaves none).
    time.sleep(2)
    seen_down: set[int] = set()
    window_start = time.monotonic()
    figures["postgres_crashed_at"] = elapsed_since(load_began)
    postgres.crash()
    while time.monotonic() - window_start < 4:
        seen_down |= {i for i in (0, 1) if platform.readyz(i) == 503}
        time.sleep(0.25)
    postgres.start()
    restarted = time.monotonic()
    wait_for(lambda: all(platform.readyz(i) == 200 for i in (0, 1)), timeout=60, interval=0.1,
             what="the web processes ready after PostgreSQL came back")  # fmt: skip
    window_end = time.monotonic()
    figures["postgres_down_seconds"] = round(restarted - window_start, 2)
    figures["postgres_ready_after_start"] = round(window_end - restarted, 2)
    assert seen_down == {0, 1}, "both web processes answer 503 on /readyz while it is down"

    # 3. A web process and an edge node SIGKILLed under load, each started again later.
    time.sleep(2)
    web_killing = time.monotonic()
    platform.webs[0].kill()
    web_killed = time.monotonic()
    figures["web_killed_at"] = elapsed_since(load_began)
    time.sleep(3)
    start(platform, platform.webs[0])
    edge_down = time.monotonic()
    platform.edges[0].kill()
    figures["edge_killed_at"] = elapsed_since(load_began)
    time.sleep(3)
    Path(platform.edges[0].env["EDGE_ADMIN"].removeprefix("unix/")).unlink(missing_ok=True)
    start(platform, platform.edges[0])
    edge_up = time.monotonic()

    # 4. Redis restarted, empty (nothing on disk, as in production).
    time.sleep(2)
    redis_server.kill()
    redis_down = time.monotonic()
    time.sleep(2)
    redis_server.start()
    wait_for(lambda: all(platform.readyz(i) == 200 for i in (0, 1)), timeout=60,
             what="the web processes ready after Redis came back")  # fmt: skip
    figures["redis_restart_ready_after"] = elapsed_since(redis_down)

    # Load goes on after the last fault, then stops; every domain must end Active.
    time.sleep(8)
    stop.set()
    adding.join(timeout=RETRY_FOR + 30)
    for thread in clients:
        thread.join(timeout=RETRY_FOR + 30)
    assert not any(t.is_alive() for t in [*clients, adding]), "a client hung"
    figures["load_seconds"] = elapsed_since(load_began)

    # A validation the CA could not make while an edge node, a web process or PostgreSQL
    # was down is the platform's to retry: nothing here presses Re-verify.
    def active() -> bool:
        count = "SELECT count(*) FROM domains_domain WHERE state = 'active'"
        return query(postgres, count)[0][0] == DOMAINS

    try:
        wait_for(active, timeout=150, interval=1, what="every domain active")
    except pytest.fail.Exception:
        states = query(postgres, "SELECT hostname, state, cert_message FROM domains_domain")
        pytest.fail(f"not all active: {[s for s in states if s[1] != 'active']}"[:3000])
    figures["all_active_after"] = elapsed_since(load_began)

    # Every domain: one stored certificate, presented by both edges, the one domainstatus names.
    per_domain = dict(
        query(
            postgres,
            "SELECT d.hostname, count(c.id) FROM domains_domain d "
            "LEFT JOIN domains_certificate c ON c.domain_id = d.id GROUP BY d.hostname",
        )
    )
    assert per_domain == dict.fromkeys(hostnames, 1)
    script = DOMAINSTATUS.format(names=hostnames)
    status_serials = json.loads(
        platform.manage("shell", "--no-imports", "-c", script).splitlines()[-1]
    )
    stored = dict(
        query(
            postgres,
            "SELECT d.hostname, c.serial FROM domains_domain d "
            "JOIN domains_certificate c ON c.domain_id = d.id",
        )
    )
    assert status_serials == stored
    for hostname in hostnames:
        for port in platform.https_ports:
            assert presented_serial(port, hostname, pebble.root_file) == stored[hostname], (
                hostname,
                port,
            )
    # Pebble placed one order per domain, and one more only where it had refused one (a new
    # order is what a refusal requires); it signed one certificate per domain.
    invalid = set(re.findall(r"order (\S+) set INVALID", pebble.log()))
    figures.update(
        orders=len(pebble.orders()),
        orders_refused=len(invalid),
        validations_per_domain=collections.Counter(
            collections.Counter(pebble.validations()).values()
        ),
        process_restarts=platform.supervisor.restarts if platform.supervisor else [],
    )
    assert len(pebble.orders()) == DOMAINS + len(invalid), figures
    assert sorted(pebble.issued()) == sorted(stored.values())

    # Every 201 is one row with the id it announced, no row lacks one, a key got one id.
    rows = query(postgres, "SELECT name, id FROM pets_pet WHERE name LIKE 'cluster-%'")
    names = collections.Counter(name for name, _ in rows)
    assert [name for name, count in names.items() if count > 1] == []
    assert dict(rows) == {name: pet for name, pet in tally.created.values()}
    assert all(len(ids) == 1 for ids in tally.ids_per_key.values())
    assert not tally.problems, tally.problems[:20]

    # No 5xx and no failed connection but in the windows the docstring names (a response
    # the killed web process had begun is cut; the edge sends any later one to the other).
    statuses = collections.Counter(answer.status for answer in tally.answers)

    def excused(a: Answer) -> bool:
        postgres_down = a.answered >= window_start and a.started <= window_end
        edge_dead = a.edge == 0 and a.answered >= edge_down and a.started <= edge_up
        web_cut = a.status == 0 and a.answered >= web_killing and a.started <= web_killed
        return postgres_down or edge_dead or web_cut

    outside = [a for a in tally.answers if a.failed and not excused(a)]
    in_window = [a for a in tally.answers if a.failed and a not in outside]
    figures.update(
        requests=len(tally.answers),
        statuses=dict(statuses),
        pets_created=len(tally.created),
        keys_retried=tally.retried_keys,
        failures_in_fault_windows=len(in_window),
        wall_seconds=elapsed_since(began),
    )
    report = json.dumps(figures, default=str)
    (tmp_path / "figures.json").write_text(report)
    with capsys.disabled():
        print("\ncluster test figures:", report)
    assert outside == [], [
        (round(a.started - load_began, 2), round(a.answered - load_began, 2), a.status, a.error)
        for a in outside
    ] + [report]
    # Every process still runs as the test left it: none exited on its own (a worker that
    # Redis's restart had taken down would have been started again by the supervisor).
    assert figures["process_restarts"] == [], report
