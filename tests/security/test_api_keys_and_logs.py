"""API keys are shown once, at creation, and never again: not in the admin, not in
any log line (of the command, of a refused key, of ordinary requests). Every
refused request leaves one log line carrying its request id."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from petstore.apikeys.models import ApiKey
from petstore.http.logjson import JSONFormatter
from petstore.http.requestid import RequestIDFilter
from tests.pets.helpers import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def every_log_line():
    """Every record of every logger, formatted as production writes it (JSON)."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(self.format(record))

    handler = Collect(level=logging.DEBUG)
    handler.addFilter(RequestIDFilter())
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def _secret(plaintext: str) -> str:
    # pst_<prefix>_<secret>: the prefix is public; the secret may itself contain "_".
    secret = plaintext.split("_", 2)[2]
    assert len(secret) >= 40
    return secret


def test_createapikey_prints_the_key_once_and_logs_nothing_of_it(every_log_line):
    out = io.StringIO()
    call_command("createapikey", "dora", "--name", "ci", stdout=out)
    plaintext = out.getvalue().strip().splitlines()[-1]
    assert plaintext.startswith("pst_") and out.getvalue().count(_secret(plaintext)) == 1
    stored = ApiKey.objects.get(user__username="dora")
    assert _secret(plaintext) not in str(vars(stored))  # only the hash is stored
    assert not any(_secret(plaintext) in line for line in every_log_line)


def test_keys_never_reach_the_logs_on_use_or_refusal(every_log_line, alice_key, settings):
    secret = _secret(alice_key.plaintext)
    good, wrong = APIClient(), APIClient()
    good.credentials(**bearer(alice_key.plaintext))
    other = "Y" if alice_key.plaintext.endswith("Z") else "Z"  # never the key's own last one
    wrong.credentials(**bearer(alice_key.plaintext[:-1] + other))
    assert good.get("/v1/pets").status_code == 200
    assert good.get("/v1/pets/999999").status_code == 404
    assert good.post("/v1/pets", {"name": ""}, format="json").status_code == 400
    assert wrong.get("/v1/pets").status_code == 401
    assert APIClient().get("/v1/pets", HTTP_AUTHORIZATION="Bearer " + secret).status_code == 401
    settings.API_RATE_LIMIT = "1/min"
    good.get("/v1/pets")
    assert every_log_line, "the refusals above must be logged"
    leaked = [line for line in every_log_line if secret in line or secret[:-1] in line]
    assert leaked == []


def test_each_refusal_is_logged_with_the_request_id_of_its_response(every_log_line, api):
    response = api.get("/v1/pets/999999", HTTP_X_REQUEST_ID="trace-me-42")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "trace-me-42"

    refusals = [
        json.loads(line)
        for line in every_log_line
        if json.loads(line).get("logger") == "petstore.api.errors"
    ]
    assert len(refusals) == 1
    assert refusals[0]["request_id"] == "trace-me-42"
    assert refusals[0]["code"] == response.json()["code"] == "not_found"
    assert refusals[0]["status"] == 404


def test_the_admin_never_shows_a_key_after_creation(client, alice_key, carol):
    client.force_login(carol)
    pk = alice_key.api_key.pk
    for url in ["/admin/apikeys/apikey/", f"/admin/apikeys/apikey/{pk}/change/"]:
        page = client.get(url, secure=True)
        assert page.status_code == 200, url
        assert _secret(alice_key.plaintext) not in page.content.decode()
        assert alice_key.api_key.key_hash not in page.content.decode()
