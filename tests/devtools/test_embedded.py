"""The embedded servers (devtools/embedded.py): what a killed run leaves behind is recovered,
never reported as an error, and nothing but their owner can reach them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
import redis

from devtools import embedded

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def folder() -> Iterator[Path]:
    # Short: the unix sockets live here (107 bytes at most).
    path = Path(tempfile.mkdtemp(prefix="emb-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def postgres_in(folder: Path) -> embedded.Postgres:
    return embedded.Postgres(folder / "postgres", folder / "run")


def test_a_server_left_running_by_a_killed_run_is_stopped_and_the_new_one_serves(folder):
    left = postgres_in(folder).start()
    assert left.process is not None
    orphan = left.process.pid  # its owner is gone: nothing will stop it but the next run
    with psycopg.connect(left.url("postgres"), autocommit=True) as connection:
        connection.execute("CREATE TABLE kept (id int)")
        connection.execute("INSERT INTO kept VALUES (7)")

    new = postgres_in(folder).start()
    try:
        assert new.process is not None and new.process.pid != orphan
        assert not psutil.pid_exists(orphan)
        with psycopg.connect(new.url("postgres")) as connection:
            assert connection.execute("SELECT id FROM kept").fetchall() == [(7,)]
    finally:
        new.stop()


def test_a_pid_file_naming_another_process_is_removed_not_reported(folder):
    server = postgres_in(folder)
    server.init()
    # What a crash leaves when the pid is taken by something else since: here, this test.
    (server.data / "postmaster.pid").write_text(f"{os.getpid()}\n{server.data}\n")
    server.start()
    try:
        assert server.answers()
    finally:
        server.stop()


def test_a_crashed_postgresql_starts_again_on_its_files(folder):
    server = postgres_in(folder).start()
    server.create_database("petstore")
    server.crash()  # SIGKILL: postmaster.pid stays behind, naming a dead process
    assert (server.data / "postmaster.pid").exists()
    server.start()
    try:
        with psycopg.connect(server.url("petstore")) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()


def test_redis_left_running_by_a_killed_run_is_stopped_and_its_socket_taken_over(folder):
    left = embedded.Redis(folder / "run" / "redis.sock").start()
    assert left.process is not None
    redis.Redis.from_url(left.url(0)).set("left", "1")
    new = embedded.Redis(folder / "run" / "redis.sock").start()
    try:
        assert not psutil.pid_exists(left.process.pid)
        client = redis.Redis.from_url(new.url(0))
        assert client.ping()
        assert client.get("left") is None  # nothing is kept on disk
    finally:
        new.stop()


def test_the_servers_listen_on_sockets_only_their_owner_can_reach(folder):
    server = postgres_in(folder).start()
    try:
        assert (folder / "run").stat().st_mode & 0o777 == 0o700
        assert (folder / "postgres").stat().st_mode & 0o777 == 0o700
        with psycopg.connect(server.url("postgres")) as connection:
            listen = connection.execute("SHOW listen_addresses").fetchone()
        assert listen == ("",)  # no TCP address at all
    finally:
        server.stop()


def test_a_server_that_cannot_start_is_one_line_with_its_log(folder):
    server = postgres_in(folder)
    server.init()
    (server.data / "postgresql.conf").write_text("max_connections = nonsense\n")
    with pytest.raises(embedded.ServerError) as refused:
        server.start()
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"PostgreSQL ({server.data}) exited at start")
    assert "max_connections" in message


def test_test_runs_whose_process_is_gone_are_removed(folder, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    # A run killed while its servers were up: its owner pid is gone, its Redis still runs.
    owner = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], text=True,
                           capture_output=True, check=True).stdout.strip()  # fmt: skip
    abandoned = folder / f"{embedded.TEST_RUN_PREFIX}killed"
    (abandoned / "run").mkdir(parents=True)
    (abandoned / embedded.OWNER_FILE).write_text(owner)
    left = embedded.Redis(abandoned / "run" / "redis.sock").start()
    assert left.process is not None
    alive = folder / f"{embedded.TEST_RUN_PREFIX}alive"
    alive.mkdir()
    (alive / embedded.OWNER_FILE).write_text(str(os.getpid()))

    embedded.remove_abandoned_test_runs()

    assert not left.answers()
    assert not abandoned.exists()
    assert alive.exists()  # a run still going keeps its servers
