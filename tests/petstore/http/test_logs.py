"""Log lines as the processes write them: the web process and the Celery worker,
plain text or JSON (LOG_FORMAT), one record a line whatever a client sends, and
a task's lines carry the request id of the request that queued it."""

from __future__ import annotations

import json

import pytest
import requests

from domains.models import Domain
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET
from tests.processes import Worker, service_env, wait_for, web_server


@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_a_newline_in_a_path_cannot_forge_a_log_line(
    transactional_db, settings, tmp_path, log_format
):
    env = service_env(settings, LOG_FORMAT=log_format)
    with web_server(env, tmp_path) as base:
        response = requests.get(base + "/v1/pets/1%0AFORGED%0D%1B[31m%C2%85x", timeout=10)
        assert response.status_code == 401  # unauthenticated: refused, and logged
    (log_path,) = tmp_path.glob("web-*.log")
    lines = log_path.read_text().splitlines()
    refusals = [line for line in lines if "Refused GET /v1/pets/1" in line]
    assert len(refusals) == 1
    assert not any(line.startswith("FORGED") for line in lines)
    message = json.loads(refusals[0])["message"] if log_format == "json" else refusals[0]
    assert "/v1/pets/1\\nFORGED\\r\\x1b[31m\\x85x: 401 unauthorized" in message


def test_the_worker_writes_json_lines_with_the_request_id_that_queued_its_task(
    transactional_db, dns_server, settings, tmp_path, alice_client, shop, alice
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    env = service_env(settings, DB_CONN_MAX_AGE="0", LOG_FORMAT="json")
    worker = Worker(env, tmp_path, "logs-test", pool="solo", purge=True)
    try:
        worker.wait_ready()
        response = alice_client.post(
            f"/dashboard/projects/shop/domains/{domain.hostname}/verify/",
            HTTP_X_REQUEST_ID="verify-req-7",
        )
        assert response.status_code == 302

        def checked():
            return Domain.objects.get(pk=domain.pk).checked_at is not None

        wait_for(checked, timeout=60, what="the queued check to run")
        wait_for(lambda: "verify-req-7" in worker.log(), timeout=10, what="the task's log lines")
    finally:
        worker.stop()
    entries = [json.loads(line) for line in worker.log().splitlines() if line.startswith("{")]
    assert entries, worker.log()[-3000:]
    task_lines = [entry for entry in entries if entry["request_id"] == "verify-req-7"]
    assert task_lines
    assert {"ts", "level", "logger", "message"} <= set(task_lines[0])
    assert any(entry["logger"] == "celery.app.trace" for entry in task_lines)  # "succeeded"
    # Outside any task, the worker's own lines carry no request id.
    assert any(" ready." in entry["message"] and entry["request_id"] == "-" for entry in entries)
