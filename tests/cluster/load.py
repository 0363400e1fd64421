"""The cluster test's load: API clients through the edges, as a client would send, and the
tally of what every request got."""

from __future__ import annotations

import collections
import http.client
import json
import ssl
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.cluster.services import API_HOST, Platform
from tests.fixtures.domains import TARGET

# Seconds a create is retried with its key (through a fault's outage: a cut connection, a
# 5xx, or a 409 while the first attempt commits).
RETRY_FOR = 90.0


@dataclass
class Answer:
    started: float
    answered: float
    status: int  # 0: the connection failed
    path: str
    edge: int  # which edge node it was sent to
    error: str = ""  # what failed, when the connection did

    @property
    def failed(self) -> bool:
        """A 5xx or a failed connection: what only a fault's window may excuse."""
        return self.status == 0 or self.status >= 500


@dataclass
class Tally:
    answers: list[Answer] = field(default_factory=list)
    # Idempotency-Key -> (name, the id of its 201), and the ids every 201 of a key announced.
    created: dict[str, tuple[str, int]] = field(default_factory=dict)
    ids_per_key: dict[str, set[int]] = field(default_factory=lambda: collections.defaultdict(set))
    retried_keys: int = 0
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Api:
    """HTTPS through the edges, as an API client: a new connection per attempt, the next
    edge after a connection error, the same Idempotency-Key on every attempt."""

    def __init__(self, platform: Platform, token: str, tally: Tally, first_edge: int):
        self.ports = platform.https_ports
        self.context = ssl.create_default_context(cafile=str(platform.api_ca))
        self.token = token
        self.tally = tally
        self.edge = first_edge

    def attempt(self, method: str, path: str, body: dict, key: str) -> tuple[int, Any]:
        status, answer, _ = self.attempt_with_headers(method, path, body, key)
        return status, answer

    def attempt_with_headers(
        self, method: str, path: str, body: dict, key: str
    ) -> tuple[int, Any, http.client.HTTPMessage | None]:
        started, edge = time.monotonic(), self.edge
        status, answer, headers, error = 0, None, None, ""
        try:
            connection = http.client.HTTPSConnection(
                API_HOST, self.ports[self.edge], context=self.context, timeout=30
            )
            try:
                connection.request(
                    method, path, body=json.dumps(body),
                    headers={"Authorization": f"Bearer {self.token}",
                             "Content-Type": "application/json", "Idempotency-Key": key},
                )  # fmt: skip
                response = connection.getresponse()
                status, raw, headers = response.status, response.read(), response.headers
            finally:
                connection.close()
            answer = json.loads(raw) if raw else None
        except (OSError, http.client.HTTPException, json.JSONDecodeError) as failure:
            error = repr(failure)
            self.edge = (self.edge + 1) % len(self.ports)
        with self.tally.lock:
            self.tally.answers.append(Answer(started, time.monotonic(), status, path, edge, error))
        return status, answer, headers

    def send(self, method: str, path: str, body: dict, *, done: set[int]) -> tuple[int, Any, int]:
        """Until an answer in `done`: the status, the body and the attempts it took."""
        key, deadline, attempts = uuid.uuid4().hex, time.monotonic() + RETRY_FOR, 0
        while True:
            attempts += 1
            status, answer = self.attempt(method, path, body, key)
            if status in done or time.monotonic() > deadline:
                return status, answer, attempts
            time.sleep(0.2)


class PetClient(Api):
    def run(self, number: int, stop: threading.Event, category: int) -> None:
        sequence = 0
        while not stop.is_set():
            sequence += 1
            name = f"cluster-{number}-{sequence}"
            key, deadline, attempts = uuid.uuid4().hex, time.monotonic() + RETRY_FOR, 0
            body = {"name": name, "categoryId": category}
            while True:
                attempts += 1
                status, answer = self.attempt("POST", "/v1/pets", body, key)
                if status == 201 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)  # a cut connection, a 5xx, or 409: the first attempt commits
            if status != 201:
                with self.tally.lock:
                    self.tally.problems.append(f"{name}: {status} {answer}")
                continue
            # Every fifth create, and every one that needed a retry, is sent once more with
            # its key: the answer must be the same pet, said to be a replay.
            if attempts > 1 or sequence % 5 == 0:
                deadline = time.monotonic() + RETRY_FOR
                while True:  # a fault's cut or 5xx is sent again (and counted)
                    again, replay, headers = self.attempt_with_headers(
                        "POST", "/v1/pets", body, key
                    )
                    if (again != 0 and again < 500) or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                replayed = headers is not None and headers.get("Idempotent-Replayed") == "true"
                if again != 201 or not replayed:
                    with self.tally.lock:
                        self.tally.problems.append(f"{name}: replay {again} {replay} {headers}")
                else:
                    with self.tally.lock:
                        self.tally.ids_per_key[key].add(replay["id"])
            with self.tally.lock:
                self.tally.created[key] = (name, answer["id"])
                self.tally.ids_per_key[key].add(answer["id"])
                self.tally.retried_keys += attempts > 1


def add_and_verify(api: Api, hostnames: list[str], dns_server, pause: float) -> None:
    """Each domain added, its CNAME set, Verify chosen: the owner's steps, through the API."""
    for hostname in hostnames:
        status, answer, _ = api.send(
            "POST", "/v1/projects/shop/domains", {"hostname": hostname}, done={201}
        )
        if status != 201:
            api.tally.problems.append(f"add {hostname}: {status} {answer}")
            continue
        dns_server.add(hostname, "CNAME", TARGET + ".")
        path = f"/v1/projects/shop/domains/{hostname}/verify"
        # 409 check_in_progress: the check a cut Verify queued is under way.
        status, answer, _ = api.send("POST", path, {}, done={202, 409})
        if status not in (202, 409):
            api.tally.problems.append(f"verify {hostname}: {status} {answer}")
        time.sleep(pause)
