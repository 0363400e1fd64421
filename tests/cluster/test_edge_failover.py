"""The edge in front of a web process that is gone: requests go to the one that answers, and
when none does, the client gets a 502 with a request id, and the edge's access line says so.

`manage.py edge` with EDGE_UPSTREAMS naming a port nothing listens on (a web process
killed or restarting) beside a live web process: every request, a POST too, is answered by the
live one, none with the 502 Caddy gives when it tries a dead upstream and stops there.
"""

from __future__ import annotations

import http.client
import json

import pytest
from django.conf import settings as django_settings

from devtools.sockets import free_port
from tests.fixtures.plainedge import plain_edge
from tests.processes import service_env, wait_for, web_server

pytestmark = pytest.mark.django_db(transaction=True)


def get(port: int, method: str = "GET", **headers: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, "/healthz", headers={"Host": "localhost", **headers})
        response = connection.getresponse()
        response.read()
        return response
    finally:
        connection.close()


def test_requests_skip_a_dead_web_process(tmp_path):
    dead = f"127.0.0.1:{free_port()}"
    with (
        web_server(service_env(django_settings), tmp_path) as web,
        plain_edge([dead, web.removeprefix("http://")], tmp_path) as edge,
    ):
        statuses = [get(edge.port, method).status for method in ["GET", "POST"] * 10]
    # /healthz answers GET (200) and refuses POST (405): every one reached the live process.
    assert statuses == [200, 405] * 10


def test_with_no_web_process_the_502_has_a_request_id_and_an_access_line(tmp_path):
    dead = f"127.0.0.1:{free_port()}"
    with plain_edge([dead], tmp_path, LOG_FORMAT="json") as edge:
        # After the edge's retries (domains/edge/caddy.py: 5 s).
        response = get(edge.port, Authorization="Bearer never-logged-5e0b")
        request_id = response.headers["X-Request-ID"]

        def line() -> list[dict]:
            entries = [
                json.loads(text)
                for text in (tmp_path / "edge.log").read_text().splitlines()
                if text.startswith("{")
            ]
            return [
                entry
                for entry in entries
                if entry["logger"] == "http.log.access" and entry.get("request_id") == request_id
            ]

        (entry,) = wait_for(line, timeout=10, what="the 502's access line")
        log = (tmp_path / "edge.log").read_text()
    # Why, in a line of its own; the credentials in neither.
    assert f"dial tcp {dead}: connect: connection refused" in log
    assert "never-logged" not in log
    assert response.status == 502
    assert request_id
    assert (entry["request"]["method"], entry["request"]["uri"]) == ("GET", "/healthz")
    assert entry["status"] == 502
