"""Early answers through the edge (petstore/http/earlyanswers.py): the edge reuses its
connections to the web processes for every client, so an answer given before a body was read
that left its connection unusable would fail someone else's request (a 502, or a request sent
twice). Two clients keep a connection each to the edge, as browsers and API clients do; one
sends what is answered early, the other reads the list meanwhile. The same on the web process
alone: tests/petstore/http/test_early_answers.py."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings

from tests.fixtures.plainedge import plain_edge
from tests.processes import service_env, web_server_process

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 25
TOO_LARGE = 64 * 1024 + 1  # DATA_UPLOAD_MAX_MEMORY_SIZE's default, and one byte more


@pytest.fixture(scope="module")
def edge_port(django_db_setup, tmp_path_factory) -> Iterator[int]:
    """Production's web line (two workers) and production's edge before it, for the module."""
    tmp_path = tmp_path_factory.mktemp("early")
    env = service_env(django_settings)
    with (
        web_server_process(env, tmp_path, workers=2, production=True) as (web, _),
        plain_edge([web.removeprefix("http://")], tmp_path) as edge,
    ):
        yield edge.port


def chunks() -> Iterator[bytes]:
    for _ in range(16):
        yield b" " * 4096


def answer(connection: http.client.HTTPConnection, method: str, body=None, **headers) -> tuple:
    connection.request(method, "/v1/pets", body=body, headers={"Host": "localhost", **headers})
    response = connection.getresponse()
    text = response.read()
    return response.status, json.loads(text).get("code") if text.startswith(b"{") else None


def test_early_answers_leave_the_edges_connections_to_every_other_client(edge_port, alice_key):
    key = {"Authorization": f"Bearer {alice_key.plaintext}", "Content-Type": "application/json"}
    pet = json.dumps({"name": "Rex", "categoryId": 1})
    early = [
        ((b"{" * TOO_LARGE,), key, (413, "payload_too_large")),
        ((chunks(),), key, (400, "bad_request")),  # chunked: no length the app reads by
        ((pet + " " * 50_000,), {"Content-Type": "application/json"}, (401, "unauthorized")),
    ]
    refused: list[tuple] = []
    listed: list[tuple] = []
    done = threading.Event()

    def reader() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", edge_port, timeout=10)
        try:
            while not done.is_set():
                listed.append(answer(connection, "GET", **key))
        finally:
            connection.close()

    thread = threading.Thread(target=reader)
    thread.start()
    connection = http.client.HTTPConnection("127.0.0.1", edge_port, timeout=10)
    connection.auto_open = 0  # the edge keeps this client's connection throughout
    connection.connect()
    try:
        for _ in range(ROUNDS):
            for (body,), headers, expected in early:
                got = answer(connection, "POST", body, **headers)
                refused.append((got, expected))
            refused.append((answer(connection, "GET", **key), (200, None)))
    finally:
        done.set()
        thread.join(timeout=30)
        connection.close()

    assert [got for got, _ in refused] == [expected for _, expected in refused]
    assert listed and set(listed) == {(200, None)}
