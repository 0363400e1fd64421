"""The units of deploy/systemd/ booted under a real systemd (252, Debian 12's): a container
made by systemd-nspawn from .ci/systemd-drill-image's root file system, with its own
PostgreSQL and Redis on its own loopback, this checkout at /opt/petstore and the units
enabled as docs/operators/systemd.md enables them (tests/deploy/systemd_drill.py). What an
operator leaves unattended: a boot with PostgreSQL late comes up by itself, a worker killed
during a database outage is back after it, the edge serves through the outage, the key
reaches its two holders as a credential, out of reach of the others, and the documented
rollout loses no request at the edge.

`make drill` runs it, in one process, as root (`make test` leaves it out: it boots a whole
platform for minutes). The container's root is mounted read-only under a throwaway overlay
(--volatile=overlay): each run boots the same image. One container for the module; the
boot's test comes first. Under xdist the module needs `--dist loadfile`: pytest-xdist 3.8
under pytest 9.2 no longer suffixes node ids with their xdist_group, so `--dist loadgroup`
spreads the mark's tests over the workers (the second one to boot fails, saying so).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.deploy.systemd_drill import (
    ANSWERED,
    SERVICES,
    THROUGH_THE_EDGE,
    Clients,
    Machine,
    booted,
    rollout_commands,
)
from tests.needs import require, systemd_drill_missing

pytestmark = [
    pytest.mark.systemd,
    pytest.mark.xdist_group("systemd-drill"),
    # Above the drill's own waits (systemd_drill.WAIT), which fail first, with the journal.
    pytest.mark.timeout(900),
]

# The workers the rollout restarts (each finishes its tasks first).
WORKERS = ["petstore-worker", "petstore-certificates", "petstore-webhooks", "petstore-beat"]
# Tried every 10 s (RestartSec=): PostgreSQL is still down at the third try, 20 s after boot.
RELEASE_TRIES_BEFORE_POSTGRESQL = 3


@pytest.fixture(scope="module")
def machine(tmp_path_factory) -> Iterator[Machine]:
    require(systemd_drill_missing, what="booting deploy/systemd/")
    with booted(tmp_path_factory.mktemp("drill")) as machine:
        yield machine


def test_a_boot_with_postgresql_late_comes_up_by_itself(machine):
    # PostgreSQL is not started at boot: the release fails and is tried again, the services
    # fail their schema check and are tried again; nothing waits on anything that failed.
    machine.until(
        lambda: (
            machine.number("petstore-release", "NRestarts") >= RELEASE_TRIES_BEFORE_POSTGRESQL - 1
        ),
        "retried the release",
        "petstore-release",
    )
    assert "Connection refused" in machine.journal("petstore-release")
    machine.until(
        lambda: all(machine.number(unit, "NRestarts") >= 1 for unit in SERVICES),
        "retried every service",
        *SERVICES,
    )
    assert "active" not in machine.states(*SERVICES)

    late = time.monotonic() - machine.booted_at
    machine.run("systemctl", "start", "postgresql.service")

    machine.until(
        lambda: machine.states(*SERVICES) == ["active"] * 6,
        "started every service",
        "petstore-release",
        *SERVICES,
    )
    assert machine.states("petstore.target") == ["active"]
    # The release ran to its end, once PostgreSQL answered.
    assert machine.show("petstore-release", "Result") == "success"
    # Serving: the web processes with the database and the broker, the edge over TLS.
    assert machine.answer("http://127.0.0.1:8000/readyz") == "200"
    assert machine.answer(THROUGH_THE_EDGE) == "200"
    serving = time.monotonic() - machine.booted_at
    print(f"PostgreSQL started {late:.0f} s after boot; all serving {serving:.0f} s after boot")


def test_a_worker_killed_during_a_database_outage_is_back_after_it(machine):
    machine.up()
    before = machine.show("petstore-worker", "MainPID")
    machine.run("systemctl", "stop", "postgresql.service")
    machine.run("kill", "-KILL", before)  # its main process, as a crash would end it
    restarts = machine.number("petstore-worker", "NRestarts")
    # Down for as long as the database is: each try fails its schema check, and the next
    # one comes (no start limit).
    machine.until(
        lambda: machine.number("petstore-worker", "NRestarts") >= restarts + 3,
        "tried the worker again and again",
        "petstore-worker",
    )
    assert machine.states("petstore-worker") != ["active"]
    assert "Connection refused" in machine.journal("petstore-worker")

    machine.run("systemctl", "start", "postgresql.service")

    machine.until(
        lambda: machine.states("petstore-worker") == ["active"],
        "brought the worker back",
        "petstore-worker",
    )
    assert machine.show("petstore-worker", "MainPID") != before
    # Any other process that ended during the outage is back too.
    machine.up()
    tries = machine.number("petstore-worker", "NRestarts") - restarts
    print(f"the worker started {tries} times after its kill, the last once PostgreSQL was back")


def test_the_edge_serves_through_a_database_outage(machine):
    # The edge reads the database only for a handshake's certificate, and Caddy answers with
    # the placeholder when the endpoint cannot: the process stays, and so does every
    # connection. (It needs the database to start: an edge that ends during an outage is
    # back after it, as any service is.)
    machine.up()
    edge = machine.show("petstore-edge", "MainPID")
    restarts = machine.number("petstore-edge", "NRestarts")
    clients = Clients(machine, "outage")
    clients.start()
    outage = machine.cursor()

    machine.run("systemctl", "stop", "postgresql.service")
    # Through the edge, the web processes say the database is away; the edge's own reads
    # of it fail.
    machine.until(lambda: "503 0" in clients.answers(), "answered 503", "petstore-web")
    machine.until(
        lambda: "could not be read" in machine.journal("petstore-edge", after=outage),
        "failed to read the database at the edge",
        "petstore-edge",
    )
    clients.answer_again()

    machine.run("systemctl", "start", "postgresql.service")
    machine.until(lambda: machine.answer(THROUGH_THE_EDGE) == "200", "answered 200 again")
    clients.answer_again()
    tally = clients.stop()

    assert set(tally) == {ANSWERED, "503 0"}, tally
    assert machine.show("petstore-edge", "MainPID") == edge
    assert machine.number("petstore-edge", "NRestarts") == restarts
    print(f"through the edge during the outage: {sum(tally.values())} requests, {dict(tally)}")


def test_the_key_reaches_its_two_holders_as_a_credential_hidden_from_the_others(machine):
    machine.up()
    holder = machine.show("petstore-certificates", "MainPID")
    web = machine.show("petstore-web", "MainPID")
    for unit in ("petstore-certificates.service", "petstore-edge.service"):
        pid = machine.show(unit, "MainPID")
        environ = machine.run("cat", f"/proc/{pid}/environ").split("\0")
        assert not [line for line in environ if line.startswith("DOMAINS_KEY_ENCRYPTION_KEY=")]
        assert f"DOMAINS_KEY_ENCRYPTION_KEY_FILE=/run/credentials/{unit}/" in "\n".join(environ)
    # In the web unit's own view of /proc (ProtectProc=invisible), as its user: the holder's
    # process is not there at all, let alone its environment or memory; root sees it.
    uid = machine.run("id", "-u", "petstore")
    seen = f"if test -e /proc/{holder}; then echo visible; else echo hidden; fi"
    assert machine.run("sh", "-c", seen) == "visible"
    as_web = ["nsenter", f"--target={web}", "--mount", f"--setuid={uid}", f"--setgid={uid}"]
    assert machine.run(*as_web, "sh", "-c", seen) == "hidden"


def test_the_documented_rollout_loses_no_request_at_the_edge(machine):
    machine.up()
    assert machine.answer(THROUGH_THE_EDGE) == "200"
    edge = machine.show("petstore-edge", "MainPID")
    web = machine.show("petstore-web", "MainPID")
    workers = {unit: machine.show(unit, "MainPID") for unit in WORKERS}
    release = machine.show("petstore-release", "ExecMainStartTimestampMonotonic")
    # As the install section does (the container has a network namespace of its own).
    machine.run("sh", "-c", "echo 1 > /proc/sys/net/ipv4/tcp_migrate_req")
    # Requests through the edge's HTTPS port to the web processes, which ask the database
    # and the broker, for as long as the rollout runs, from clients side by side.
    clients = Clients(machine, "rollout")
    clients.start()

    machine.run("sh", "-c", rollout_commands())
    machine.until(
        lambda: machine.states(*SERVICES) == ["active"] * 6, "rolled out", "petstore-release"
    )
    clients.answer_again()
    tally = clients.stop()

    assert set(tally) == {ANSWERED}, tally
    # The edge kept its process; the web processes their main one (a reload).
    assert machine.show("petstore-edge", "MainPID") == edge
    assert machine.show("petstore-web", "MainPID") == web
    # The release ran again (the rollout's first step), and every worker was replaced.
    assert machine.show("petstore-release", "ExecMainStartTimestampMonotonic") != release
    assert machine.show("petstore-release", "Result") == "success"
    for unit, pid in workers.items():
        assert machine.show(unit, "MainPID") != pid, unit
    print(f"through the edge during the rollout: {sum(tally.values())} requests, {dict(tally)}")
