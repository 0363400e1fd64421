"""The edge in front of a web process that is gone: requests go to the one that answers.

`manage.py edge` with EDGE_UPSTREAMS naming a port nothing listens on (a web process
killed or restarting) beside a live web process: every request, a POST too, is answered by the
live one, none with the 502 Caddy gives when it tries a dead upstream and stops there.
"""

from __future__ import annotations

import http.client
import os
import sys
import tempfile
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from devtools.processes import spawn, stop_group
from devtools.sockets import free_port, tcp_port_open
from tests.cluster.services import production_command
from tests.needs import postgres_missing, redis_missing, require
from tests.processes import service_env, wait_for, web_server


@pytest.mark.django_db(transaction=True)
def test_requests_skip_a_dead_web_process(tmp_path):
    require(postgres_missing, redis_missing, what="edge")
    http_port, https_port, dead = free_port(), free_port(), free_port()
    admin = Path(tempfile.mkdtemp(prefix="edge-")) / "admin.sock"
    with web_server(service_env(django_settings), tmp_path) as web:
        env = service_env(
            django_settings,
            HTTP_PORT=str(http_port),
            HTTPS_PORT=str(https_port),
            EDGE_CERTIFICATES_PORT=str(free_port()),
            EDGE_UPSTREAMS=f"127.0.0.1:{dead},{web.removeprefix('http://')}",
            EDGE_ADMIN=f"unix/{admin}",
            PETSTORE_VAR_DIR=str(tmp_path / "var"),
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        )
        edge = spawn(
            ["/bin/sh", "-c", "exec " + production_command("edge")],
            env=env,
            log_path=tmp_path / "edge.log",
        )
        try:
            wait_for(lambda: tcp_port_open(http_port), timeout=30, what="the edge's HTTP port")
            statuses = []
            for method in ["GET", "POST"] * 10:
                connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
                connection.request(method, "/healthz", headers={"Host": "localhost"})
                statuses.append(connection.getresponse().status)
                connection.close()
        finally:
            stop_group(edge)
            admin.unlink(missing_ok=True)
            admin.parent.rmdir()
    # /healthz answers GET (200) and refuses POST (405): every one reached the live process.
    assert statuses == [200, 405] * 10
