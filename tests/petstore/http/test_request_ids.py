"""Every response carries a request id, and the JSON log lines carry it too."""

import json
import logging

import pytest

from petstore.http.logjson import JSONFormatter
from petstore.http.requestid import RequestIDFilter, request_id_var


@pytest.mark.django_db
def test_every_response_carries_a_request_id(client):
    first = client.get("/healthz")
    second = client.get("/healthz")
    assert len(first["X-Request-ID"]) == 32
    assert first["X-Request-ID"] != second["X-Request-ID"]


@pytest.mark.django_db
def test_a_sane_incoming_request_id_is_kept_and_a_hostile_one_replaced(client):
    kept = client.get("/healthz", HTTP_X_REQUEST_ID="lb-1234.abc")
    replaced = client.get("/healthz", HTTP_X_REQUEST_ID="x\r\nSet-Cookie: a=b" + "y" * 80)
    assert kept["X-Request-ID"] == "lb-1234.abc"
    assert replaced["X-Request-ID"] != "lb-1234.abc"
    assert "\n" not in replaced["X-Request-ID"] and len(replaced["X-Request-ID"]) == 32


def test_json_log_lines_carry_the_request_id_and_extras():
    record = logging.LogRecord("petstore", logging.INFO, __file__, 1, "hello %s", ("you",), None)
    record.code = "not_found"
    token = request_id_var.set("req-42")
    try:
        RequestIDFilter().filter(record)
    finally:
        request_id_var.reset(token)
    line = json.loads(JSONFormatter().format(record))
    assert line["message"] == "hello you"
    assert line["request_id"] == "req-42"
    assert line["code"] == "not_found"
    assert line["level"] == "INFO"
