"""The access lines: the edge writes one for every request, in LOG_FORMAT, with the request id
the web process uses and returns, and without the credentials a client sent; the web process
behind it (Procfile.production's line) writes none. A handshake that fails gets its line too.
The whole module runs once for each LOG_FORMAT, each time with an edge of its own."""

from __future__ import annotations

import http.client
import json
import re
import ssl

import pytest

from domains.models import Domain
from tests.fixtures.edge import Edge
from tests.processes import free_port, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

HOST = "www.example.test"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# What a client sends that no log line may show.
AUTHORIZATION = "Bearer never-logged-4f1c9a"
COOKIE = "__Host-sessionid=never-logged-77d0e2"


@pytest.fixture(scope="module", params=["plain", "json"])
def log_format(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def http_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def edge_environment(log_format, http_port):
    return {"LOG_FORMAT": log_format, "EDGE_HTTP": "1", "HTTP_PORT": str(http_port)}


@pytest.fixture
def active(www_on_edge) -> Domain:
    return www_on_edge


def access_entries(log: str, log_format: str) -> list[dict]:
    """The edge's access lines, each as the fields it holds. A json line is one object; a
    plain one is time, level, logger and message, tab-separated, then the fields as JSON."""
    entries = []
    for line in log.splitlines():
        if log_format == "json":
            if line.startswith("{") and (entry := json.loads(line))["logger"] == "http.log.access":
                entries.append(entry)
        elif "\thttp.log.access\t" in line:
            _, level, logger, message, fields = line.split("\t")
            entries.append({"level": level, "logger": logger, "message": message})
            entries[-1].update(json.loads(fields))
    return entries


def lines_of(edge: Edge, log_format: str, request_id: str) -> list[dict]:
    """The access lines that carry `request_id`, once the first is written."""
    return wait_for(
        lambda: [
            entry
            for entry in access_entries(edge.log(), log_format)
            if entry.get("request_id") == request_id
        ],
        timeout=10,
        what=f"the edge's access line of request {request_id}",
    )


def test_a_request_has_one_line_at_the_edge_with_the_id_it_returns_and_none_at_the_web_process(
    edge, active, log_format
):
    connection = http.client.HTTPSConnection(HOST, edge.https_port, timeout=5)
    connection.sock = edge.context().wrap_socket(edge.connect(), server_hostname=HOST)
    try:
        headers = {"Authorization": AUTHORIZATION, "Cookie": COOKIE}
        connection.request("GET", "/?ref=mail", headers=headers)
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    assert response.status == 200  # the project's page, from the web process
    request_id = response.headers["X-Request-ID"]
    assert UUID.fullmatch(request_id)  # the client sent none: the edge's, the app's answer

    (entry,) = lines_of(edge, log_format, request_id)
    request = entry["request"]
    assert (request["method"], request["uri"]) == ("GET", "/?ref=mail")
    assert request["host"] == f"{HOST}:{edge.https_port}"
    assert request["proto"] == "HTTP/1.1"
    assert request["client_ip"] == "127.0.0.1"
    assert entry["status"] == 200
    assert 0 < entry["duration"] < 5  # seconds
    log = edge.log()
    assert "never-logged" not in log
    if log_format == "json":
        # Seen, and written as Caddy's default writes credentials.
        assert request["headers"]["Authorization"] == ["REDACTED"]
        assert request["headers"]["Cookie"] == ["REDACTED"]
    # The web process answered it and wrote no line of its own.
    web_log = edge.web_log()
    assert "granian.access" not in web_log and request_id not in web_log


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        pytest.param(["trace-42.a_b"], True, id="an-id-the-app-accepts"),
        pytest.param([], False, id="none"),
        pytest.param(["x" * 65], False, id="too-long"),
        pytest.param(['bad"id\\'], False, id="other-characters"),
        pytest.param(["one", "two"], False, id="two-headers"),
    ],
)
def test_the_edge_keeps_a_clients_id_the_app_accepts_and_replaces_any_other(
    edge, http_port, log_format, sent, kept
):
    connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=5)
    try:
        connection.putrequest("GET", "/healthz?probe=1", skip_accept_encoding=True)
        for value in sent:
            connection.putheader("X-Request-ID", value)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    assert response.status == 200
    request_id = response.headers["X-Request-ID"]
    if kept:
        assert request_id == sent[0]
    else:
        assert UUID.fullmatch(request_id)
    (entry,) = lines_of(edge, log_format, request_id)
    assert entry["request"]["uri"] == "/healthz?probe=1"
    assert entry["status"] == 200


def test_a_handshake_that_fails_has_its_line(edge):
    # The edge presents its placeholder for a name it has no certificate for, which a
    # verifying client refuses: the edge's line says the client ended the handshake.
    with edge.connect() as raw:
        client_port = raw.getsockname()[1]
        with pytest.raises(ssl.SSLError):
            edge.context().wrap_socket(raw, server_hostname="nobody.example.test")
    wait_for(
        lambda: f"TLS handshake error from 127.0.0.1:{client_port}" in edge.log(),
        timeout=10,
        what="the edge's line of the failed handshake",
    )
