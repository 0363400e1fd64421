"""The edge as production runs it: plain HTTP on HTTP_PORT too (ACME challenges, the way
on to https) and the platform's own names from the operator's certificate files."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import requests
from cryptography.x509.oid import NameOID
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.tlsfiles import throwaway_ca_files
from domains.models import AcmeChallenge
from tests.processes import free_port

pytestmark = pytest.mark.django_db(transaction=True)

HOST = "www.example.test"
PLATFORM_NAMES = ["app.petstore.example", "*.petstore.localhost"]


@pytest.fixture(scope="module")
def platform_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("platform-tls")
    return throwaway_ca_files(folder, PLATFORM_NAMES, ca_name="Operator test CA")


@pytest.fixture(scope="module")
def http_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def edge_environment(platform_files, http_port):
    _, certificate, key = platform_files
    return {
        "EDGE_HTTP": "1",
        "HTTP_PORT": str(http_port),
        "EDGE_PLATFORM_CERTIFICATE": str(certificate),
        "EDGE_PLATFORM_KEY": str(key),
    }


@pytest.fixture
def active(www_on_edge):
    return www_on_edge


@pytest.mark.parametrize("name", ["app.petstore.example", "shop.petstore.localhost"])
def test_the_platforms_own_names_get_the_operators_certificate(edge, platform_files, name):
    ca_file = platform_files[0]
    presented = edge.handshake(name, cafile=ca_file)
    organization = presented.issuer.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    assert [attribute.value for attribute in organization] == ["Operator test CA"]


def test_custom_domains_keep_their_own_certificate_beside_the_platforms(edge, active):
    assert format(edge.handshake(HOST).serial_number, "x") == active.certificate.serial


def test_plain_http_through_the_edge_goes_on_to_https(edge, active, http_port):
    response = requests.get(
        f"http://127.0.0.1:{http_port}/p?q=1",
        headers={"Host": HOST},
        allow_redirects=False,
        timeout=5,
    )
    assert response.status_code == 301
    assert response.headers["Location"] == f"https://{HOST}:{edge.https_port}/p?q=1"


def test_acme_challenges_are_answered_over_plain_http_on_a_live_domain(edge, active, http_port):
    AcmeChallenge.objects.create(domain=active, token="tok3n", key_authorization="tok3n.thumb")
    response = requests.get(
        f"http://127.0.0.1:{http_port}/.well-known/acme-challenge/tok3n",
        headers={"Host": f"{HOST}:80"},
        allow_redirects=False,
        timeout=5,
    )
    assert (response.status_code, response.text) == (200, "tok3n.thumb")


def edge_config(settings, **overrides) -> dict:
    for name, value in overrides.items():
        setattr(settings, name, value)
    out = StringIO()
    call_command("edge", "--print", stdout=out)
    return json.loads(out.getvalue())


def test_under_make_run_the_edge_listens_on_https_port_only(settings, tmp_path):
    config = edge_config(settings, EDGE_HTTP=False, HTTPS_PORT=8443, EDGE_PLATFORM_CERTIFICATE="")
    servers = config["apps"]["http"]["servers"]
    assert [server["listen"] for server in servers.values()] == [[":8443"]]
    assert all(server["automatic_https"] == {"disable": True} for server in servers.values())
    assert all("h3" not in server["protocols"] for server in servers.values())
    assert config["admin"]["listen"].startswith("unix/")


def test_a_platform_certificate_without_its_key_is_refused_in_one_line(settings, tmp_path):
    settings.EDGE_PLATFORM_CERTIFICATE, settings.EDGE_PLATFORM_KEY = str(tmp_path / "c.pem"), ""
    with pytest.raises(CommandError, match="set both EDGE_PLATFORM_CERTIFICATE and"):
        call_command("edge", "--print")
    settings.EDGE_PLATFORM_KEY = str(tmp_path / "k.pem")
    with pytest.raises(CommandError, match="EDGE_PLATFORM_CERTIFICATE names .* not a readable"):
        call_command("edge", "--print")
