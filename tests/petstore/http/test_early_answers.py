"""Answers given before a request's body was read (petstore/http/earlyanswers.py), on the web
processes' server itself (`python -m petstore.webserver`): the client keeps its connection,
as requests.Session, httpx.Client and the edge do, and the next request on it gets its own
answer. A body the server will not read says `Connection: close` and the connection ends.
The same through the edge: tests/domains/edge/test_early_answers_edge.py."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings

from petstore.http.earlyanswers import DRAIN_DEADLINE, DRAIN_LIMIT
from tests.processes import service_env, web_server_process

pytestmark = pytest.mark.django_db(transaction=True)

TOO_LARGE = 64 * 1024 + 1  # DATA_UPLOAD_MAX_MEMORY_SIZE's default, and one byte more


@pytest.fixture(scope="module")
def web(django_db_setup, tmp_path_factory) -> Iterator[tuple[str, int]]:
    """One web process of one worker and one thread for the module: its host and port."""
    env = service_env(django_settings)
    with web_server_process(env, tmp_path_factory.mktemp("web")) as (base, _):
        address = urlsplit(base)
        assert address.hostname is not None and address.port is not None
        yield address.hostname, address.port


def chunks(size: int, count: int) -> Iterator[bytes]:
    """A body sent chunked: no Content-Length, so the app answers before reading it."""
    for _ in range(count):
        yield b" " * size


def answer(connection: http.client.HTTPConnection, method: str, path: str, **kwargs) -> tuple:
    connection.request(method, path, **kwargs)
    response = connection.getresponse()
    body = response.read()
    code = json.loads(body).get("code") if body.startswith(b"{") else None
    return response.status, code, response.getheader("Connection")


def test_each_early_answer_leaves_the_connection_to_the_next_request(web, alice_key):
    key = {"Authorization": f"Bearer {alice_key.plaintext}", "Content-Type": "application/json"}
    connection = http.client.HTTPConnection(web[0], web[1], timeout=10)
    connection.auto_open = 0  # a connection closed under it fails the test, never reopens
    connection.connect()
    local = connection.sock.getsockname()
    pet = json.dumps({"name": "Rex", "categoryId": 1})
    json_only = {"Content-Type": "application/json"}
    early = [
        # Refused by its Content-Length alone.
        (b"{" * TOO_LARGE, key),
        # Chunked: no length to read by, so the app says a body is missing before reading it.
        (chunks(4096, 16), key),
        # No key: refused before the body is looked at.
        (pet + " " * 50_000, json_only),
        # A media type no parser takes: refused before reading.
        (b"x" * 30_000, {**key, "Content-Type": "text/plain"}),
    ]
    answers = [
        answer(connection, "POST", "/v1/pets", body=body, headers=headers)
        for body, headers in early
    ]
    listed = answer(connection, "GET", "/v1/pets", headers=key)
    created = answer(connection, "POST", "/v1/pets", body=pet, headers=key)

    assert answers == [
        (413, "payload_too_large", None),
        (400, "bad_request", None),
        (401, "unauthorized", None),
        (415, "unsupported_media_type", None),
    ]
    assert listed == (200, None, None)
    assert created[0] in (201, 400)  # created, or refused by the category: an answer of its own
    assert connection.sock is not None and connection.sock.getsockname() == local
    connection.close()


def raw_request(web: tuple[str, int], head: bytes, sent: bytes) -> tuple[bytes, float, bool]:
    """Send `head` and the first bytes of its body, then read the answer: its head, the
    seconds it took, and whether the server then closed the connection at once."""
    with socket.create_connection(web, timeout=10) as raw:
        started = time.monotonic()
        raw.sendall(head + b"\r\n" + sent)
        received = b""
        while b"\r\n\r\n" not in received:
            received += raw.recv(65536)
        took = time.monotonic() - started
        answer_head, _, body = received.partition(b"\r\n\r\n")
        length = int(answer_head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += raw.recv(65536)
        raw.settimeout(2)
        try:
            closed = raw.recv(1) == b""
        except TimeoutError:
            closed = False
    return answer_head.lower(), took, closed


def test_a_body_past_the_drain_limit_is_answered_with_connection_close_at_once(web, alice_key):
    head = (
        f"POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {alice_key.plaintext}\r\nContent-Length: {DRAIN_LIMIT + 1}\r\n"
    ).encode()
    answer_head, took, closed = raw_request(web, head, b"{" * 1000)
    assert answer_head.startswith(b"http/1.1 413")
    assert b"\r\nconnection: close" in answer_head
    assert took < DRAIN_DEADLINE  # nothing waited for
    assert closed


def test_a_body_slower_than_the_deadline_is_answered_with_connection_close(web):
    head = (
        b"POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n"
    )
    answer_head, took, _ = raw_request(web, head, b'{"name": ')  # and nothing more
    assert answer_head.startswith(b"http/1.1 401")
    assert b"\r\nconnection: close" in answer_head
    assert DRAIN_DEADLINE <= took < DRAIN_DEADLINE + 5
    # The thread still waiting on that client holds no worker: the next client is answered.
    connection = http.client.HTTPConnection(web[0], web[1], timeout=5)
    assert answer(connection, "GET", "/healthz")[0] == 200
    connection.close()
