"""A client generated from /v1/openapi.json by openapi-python-client adds, verifies and
removes a domain: the document is complete enough for a client nobody wrote by hand.

The generated code is written to a temporary directory and imported; its httpx client
talks to the app over WSGI in this process (the test's database transaction), with
alice's bearer key. The DNS record is on the loopback DNS server and the check runs as
the worker runs it.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

from domains.models import Domain
from domains.tasks import check_domain
from tests.fixtures.domains import TARGET

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


@pytest.fixture
def generated(tmp_path, anon, db, settings):
    """The generated package, imported as `petstore_client`."""
    document = tmp_path / "openapi.json"
    document.write_bytes(anon.get("/v1/openapi.json").content)
    config = tmp_path / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run on the generated code
    subprocess.run(
        [
            GENERATOR,
            "generate",
            "--path",
            document,
            "--meta",
            "none",
            "--output-path",
            tmp_path / "petstore_client",
            "--config",
            config,
            "--fail-on-warning",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("petstore_client")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == "petstore_client"]:
            del sys.modules[name]


@pytest.fixture
def wsgi_transport(settings):
    """The app over WSGI, keeping the test's connection open (as Django's test client does)."""
    settings.ALLOWED_HOSTS = ["localhost"]
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield httpx.WSGITransport(app=get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_the_generated_client_adds_verifies_and_removes_a_domain(
    generated, wsgi_transport, alice_key, shop, dns_server, django_capture_on_commit_callbacks
):
    add = importlib.import_module("petstore_client.api.domains.add_domain")
    verify = importlib.import_module("petstore_client.api.domains.verify_domain")
    get = importlib.import_module("petstore_client.api.domains.get_domain")
    remove = importlib.import_module("petstore_client.api.domains.remove_domain")
    models = importlib.import_module("petstore_client.models")
    client = generated.AuthenticatedClient(
        base_url="http://localhost/v1",
        token=alice_key.plaintext,
        httpx_args={"transport": wsgi_transport},
        raise_on_unexpected_status=True,
    )

    added = add.sync_detailed(
        "shop", client=client, body=models.NewDomain(hostname="www.example.test")
    )
    assert added.status_code == 201
    assert isinstance(added.parsed, models.Domain)
    assert added.parsed.dns_records[0].value == TARGET

    refused = add.sync_detailed(
        "shop", client=client, body=models.NewDomain(hostname="www.example.test")
    )
    assert refused.status_code == 409
    assert isinstance(refused.parsed, models.DomainsError)
    assert refused.parsed.code == models.DomainsErrorCodeEnum.DUPLICATE

    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    with django_capture_on_commit_callbacks() as queued:
        verified = verify.sync_detailed("shop", "www.example.test", client=client)
    assert verified.status_code == 202
    assert len(queued) == 1
    check_domain(Domain.objects.get(hostname="www.example.test").pk)
    shown = get.sync("shop", "www.example.test", client=client)
    assert isinstance(shown, models.Domain)
    assert shown.is_live and shown.check.code == "ok"

    assert remove.sync_detailed("shop", "www.example.test", client=client).status_code == 204
    missing = get.sync_detailed("shop", "www.example.test", client=client)
    assert missing.status_code == 404
    assert not Domain.objects.exists()
