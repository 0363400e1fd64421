"""`make run`'s web process under load: 8 clients creating pets for 20 seconds, some of their
connections cut off mid-request and the create retried with the same Idempotency-Key.

The server is started from petstore/Procfile's `web` line, the one `make run` starts, on
PostgreSQL and Redis, with `make run`'s settings (DEBUG on, persistent database
connections). What must hold:
no 5xx; every 201 is a row with the id it announced, no row without its 201, none twice;
a request whose body never fully arrived is never answered nor stored.
"""

from __future__ import annotations

import collections
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from devtools.devserver import procfile_command
from tests.processes import ROOT, free_port, service_env, wait_for

LOAD_SECONDS = 20
CLIENTS = 8
# Each create is, at random: plain; cut after half its body (then retried); cut after the
# whole request, before the answer (then retried); sent with a Content-Length 100 bytes
# longer than its body (must get no answer; then cut and retried); cut after half its body
# and never retried (must leave no row).
KINDS = ("plain", "cut-mid-body", "cut-before-answer", "short-body", "abandoned")
WEIGHTS = (6, 1, 1, 1, 1)
RETRY_FOR = 30.0  # seconds a retried create may meet 409 (its first attempt committing)


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@contextlib.contextmanager
def make_run_web(env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The Procfile's `web` process on a free port, run by a shell as honcho runs it."""
    port = free_port()
    env = {
        **env,
        "PORT": str(port),
        "HTTP_PORT": str(port),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    }
    log_path = tmp_path / "web.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["/bin/sh", "-c", "exec " + procfile_command("web")],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def up() -> bool:
        if process.poll() is not None:
            pytest.fail("the web process exited:\n" + log_path.read_text(errors="replace")[-3000:])
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/readyz", headers={"Host": "localhost"})
            return connection.getresponse().status == 200
        except OSError:
            return False

    try:
        wait_for(up, timeout=60, what="the web process to answer /readyz")
        yield "127.0.0.1", port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


@dataclass
class Tally:
    created: dict[str, int] = field(default_factory=dict)  # name -> id its 201 announced
    abandoned: set[str] = field(default_factory=set)
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    kinds: collections.Counter[str] = field(default_factory=collections.Counter)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Client:
    def __init__(self, address: tuple[str, int], api_key: str, category: int, tally: Tally):
        self.address = address
        self.headers = {
            "Host": "localhost",
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
        }
        self.category = category
        self.tally = tally

    def raw_request(self, key: str, body: bytes, *, content_length: int) -> bytes:
        headers = {**self.headers, "Idempotency-Key": key, "Content-Length": str(content_length)}
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return f"POST /v1/pets HTTP/1.1\r\n{head}\r\n".encode() + body

    def post(self, key: str, body: bytes) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection(*self.address, timeout=60)
        try:
            connection.request(
                "POST", "/v1/pets", body=body, headers={**self.headers, "Idempotency-Key": key}
            )
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def create(self, name: str, key: str, body: bytes) -> None:
        """POST until the create is answered; 409 means its cut first attempt is committing."""
        deadline = time.monotonic() + RETRY_FOR
        while True:
            status, answer = self.post(key, body)
            with self.tally.lock:
                self.tally.statuses[status] += 1
            if status == 409 and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            if status != 201:
                self.problem(f"{name}: {status} {answer[:300]!r}")
                return
            with self.tally.lock:
                self.tally.created[name] = json.loads(answer)["id"]
            return

    def cut(self, request: bytes, *, wait_for_answer: float = 0.0) -> bytes:
        """Send `request` and close the connection; what the server said meanwhile."""
        with socket.create_connection(self.address, timeout=10) as sock:
            sock.sendall(request)
            if not wait_for_answer:
                return b""
            sock.settimeout(wait_for_answer)
            try:
                return sock.recv(65536)
            except TimeoutError:
                return b""

    def problem(self, text: str) -> None:
        with self.tally.lock:
            self.tally.problems.append(text)

    def run(self, seed: int, deadline: float) -> None:
        rng = random.Random(seed)
        number = 0
        while time.monotonic() < deadline:
            number += 1
            name = f"load-{seed}-{number}"
            key = uuid.uuid4().hex
            body = json.dumps({"name": name, "categoryId": self.category}).encode()
            kind = rng.choices(KINDS, WEIGHTS)[0]
            with self.tally.lock:
                self.tally.kinds[kind] += 1
            if kind in ("cut-mid-body", "abandoned"):
                half = body[: len(body) // 2]
                self.cut(self.raw_request(key, half, content_length=len(body)))
            elif kind == "cut-before-answer":
                self.cut(self.raw_request(key, body, content_length=len(body)))
            elif kind == "short-body":
                early = self.cut(
                    self.raw_request(key, body, content_length=len(body) + 100),
                    wait_for_answer=0.3,
                )
                if early:
                    self.problem(f"{name}: answered before its body arrived: {early[:120]!r}")
            if kind == "abandoned":
                with self.tally.lock:
                    self.tally.abandoned.add(name)
            else:
                self.create(name, key, body)


def drive(address: tuple[str, int], api_key: str, category: int) -> Tally:
    tally = Tally()
    deadline = time.monotonic() + LOAD_SECONDS
    clients = [Client(address, api_key, category, tally) for _ in range(CLIENTS)]
    threads = [
        threading.Thread(target=client.run, args=(seed, deadline), daemon=True)
        for seed, client in enumerate(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=LOAD_SECONDS + RETRY_FOR + 60)
    assert not any(thread.is_alive() for thread in threads), "a client hung"
    return tally


ROWS = (
    "import json; from pets.models import Pet; "
    "print(json.dumps(list(Pet.objects.filter(name__startswith='load-')"
    ".values_list('name', 'id'))))"
)


def make_run_env(settings, tmp_path: Path) -> dict[str, str]:
    """The test database (committed: the server is another process) and the suite's Redis."""
    return service_env(settings, DEBUG="1", PETSTORE_VAR_DIR=str(tmp_path / "var"))


@dataclass
class Load:
    tally: Tally
    rows: list[tuple[str, int]]  # the pets the load left, (name, id)

    def report(self) -> str:
        tally = self.tally
        return f"{len(tally.created)} created; {dict(tally.kinds)}; statuses {dict(tally.statuses)}"


def make_run_under_load(env: dict[str, str], tmp_path: Path) -> Load:
    """`make run`'s steps (migrate, the demo data, then the web process), a key for the
    clients, LOAD_SECONDS of load, and the rows it left; its files in `tmp_path`."""
    manage(env, "migrate", "--noinput")
    category = int(manage(env, "loaddemo").split()[1])  # "Category <id> <name>: ..."
    api_key = manage(env, "createapikey", "loadtest").splitlines()[-1]
    with make_run_web(env, tmp_path) as address:
        tally = drive(address, api_key, category)
    rows = json.loads(manage(env, "shell", "--no-imports", "-c", ROWS).splitlines()[-1])
    return Load(tally, [(name, pet) for name, pet in rows])


def check(load: Load) -> None:
    tally, report = load.tally, load.report()
    names = collections.Counter(name for name, _ in load.rows)
    assert not [status for status in tally.statuses if status >= 500], report
    assert not tally.problems, "\n".join(tally.problems[:20])
    assert [name for name, count in names.items() if count > 1] == [], "created twice"
    assert dict(load.rows) == tally.created, "every 201 is a row with its id, and no row lacks one"
    assert not tally.abandoned & set(names), "a request whose body never arrived was stored"
    # The load was real: every kind ran, and some hundreds of pets were created.
    assert set(tally.kinds) == set(KINDS), report
    assert len(tally.created) >= 200, report


@pytest.mark.timeout(LOAD_SECONDS + 240)
@pytest.mark.django_db(transaction=True)
def test_make_run_survives_concurrent_cut_and_retried_creates(settings, tmp_path):
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""  # the server, not 429s
    load = make_run_under_load(make_run_env(settings, tmp_path), tmp_path)
    print(load.report())  # shown with `pytest -rP`
    check(load)
