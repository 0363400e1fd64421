"""The certificate endpoint Caddy asks during each handshake: what it answers, and to whom.

Only the edge's Caddy gets a key: it alone knows the secret `manage.py edge` made at its
start. Any other local process (a cron job, another service, an SSRF through one) is
refused before the database is read, and Caddy's configuration, which holds the secret,
is readable by the edge's user only.
"""

from __future__ import annotations

import socket
import stat
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import requests
from cryptography import x509
from django.db import connection
from django.test.utils import CaptureQueriesContext

from domains.choices import State
from domains.edge import caddy
from domains.edge.endpoint import Endpoint
from domains.edge.fallback import is_fallback
from domains.edge.paths import CERTIFICATE_PATH, FALLBACK_PATH, PERMISSION_PATH, SECRET_FILE
from domains.models import Certificate, Domain
from domains.pki import sealing
from domains.services import certificates
from domains.services.custom_domains import domain_add
from tests.domains.edge.conftest import SECRET
from tests.fixtures.domains import go_live

# The endpoint closes its database connection around each request, as a process of its own
# does: the tests' rows must be committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("edge_secret")]


def call(
    endpoint: Endpoint,
    path: str,
    query: str = "",
    remote: str = "127.0.0.1",
    secret: str | None = SECRET,
) -> tuple[str, bytes]:
    """The endpoint's answer; a certificate is asked as Caddy asks, with the secret."""
    if path == CERTIFICATE_PATH and secret is not None:
        path = f"{path}/{secret}"
    answer: dict[str, str] = {}

    def start_response(status, headers):
        answer["status"] = status

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "REMOTE_ADDR": remote,
    }
    body = b"".join(endpoint(environ, start_response))
    return answer["status"], body


@pytest.fixture
def active(dns_server, www):
    go_live(www, State.ISSUING)
    return certificates.certificate_issue(domain_id=www.pk)


@pytest.mark.parametrize(
    "server_name", ["www.example.test", "WWW.Example.Test.", " www.example.test"]
)
def test_a_live_domain_gets_its_chain_and_key_in_clear(endpoint, active, server_name):
    status, body = call(endpoint, CERTIFICATE_PATH, f"server_name={server_name}")
    assert status == "200 OK"
    assert body.decode().startswith(active.pem.strip())
    assert sealing.unseal(active.key_pem).strip() in body.decode()


@pytest.mark.parametrize("server_name", ["", "stranger.example.test", "example.test"])
def test_any_other_name_gets_nothing(endpoint, active, server_name):
    assert call(endpoint, CERTIFICATE_PATH, f"server_name={server_name}") == ("204 No Content", b"")


@pytest.mark.parametrize("rival_state", [State.LOST, State.PENDING, State.FAILED])
def test_another_projects_claim_never_gets_its_certificate_served(
    endpoint, active, bobs, bob, rival_state
):
    """bob claims alice's live name; a certificate his claim once had (say, before it lost
    the name) is never presented, whatever state his claim is in."""
    rival = domain_add(project=bobs, hostname="www.example.test", actor=bob)
    Certificate.objects.create(
        domain=rival, serial="b0b", not_before=active.not_before, not_after=active.not_after,
        san="www.example.test", pem="bob's chain", key_pem=sealing.seal("bob's key"),
    )  # fmt: skip
    Domain.objects.filter(pk=rival.pk).update(state=rival_state)

    body = call(endpoint, CERTIFICATE_PATH, "server_name=www.example.test")[1].decode()
    assert body.startswith(active.pem.strip()) and "bob's" not in body
    Domain.objects.filter(pk=active.domain_id).update(state=State.FAILED)  # alice's stops
    endpoint.cache.refresh()  # the thread's next beat
    assert call(endpoint, CERTIFICATE_PATH, "server_name=www.example.test") == (
        "204 No Content",
        b"",
    )


def test_a_peer_that_is_not_loopback_is_refused_whatever_it_asks(endpoint, active):
    for remote in ("10.0.0.7", "192.0.2.1", "2001:db8::1", ""):
        assert (
            call(endpoint, CERTIFICATE_PATH, "server_name=www.example.test", remote)[0]
            == "403 Forbidden"
        )
    assert call(endpoint, CERTIFICATE_PATH, "server_name=www.example.test", "::1")[0] == "200 OK"


def test_caddy_may_never_issue_a_certificate_itself(endpoint):
    assert call(endpoint, PERMISSION_PATH, "domain=anything.example")[0] == "403 Forbidden"


def primary_address() -> str:
    """This machine's address on its network (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))
        return probe.getsockname()[0]


def test_the_endpoint_is_not_reachable_from_the_network(edge):
    port = int(edge.certificates.rsplit(":", 1)[1])
    assert requests.get(edge.certificate_url(), timeout=5).status_code == 204
    address = primary_address()
    assert not address.startswith("127.")
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://{address}:{port}{CERTIFICATE_PATH}", timeout=5)


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET[:-1], SECRET + "x", SECRET.upper()])
def test_without_the_edges_secret_no_key_is_given_and_no_row_is_read(endpoint, active, secret):
    with CaptureQueriesContext(connection) as queries:
        status, body = call(
            endpoint, CERTIFICATE_PATH, "server_name=www.example.test", secret=secret
        )
    assert (status, body) == ("403 Forbidden", b"")
    assert len(queries) == 0


def test_before_the_edge_wrote_a_secret_nothing_is_given(endpoint, active, settings):
    (Path(settings.EDGE_DIR) / SECRET_FILE).unlink()
    assert (
        call(endpoint, CERTIFICATE_PATH, "server_name=www.example.test", secret="")[0]
        == "403 Forbidden"
    )


def local_process_asks(url: str) -> tuple[int, bytes]:
    """What any process of the host gets, as a cron job or an SSRF would ask."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 (loopback, ours)
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def test_a_local_process_gets_no_key_from_the_running_edge(edge, dns_server, www):
    go_live(www, State.ISSUING)
    assert certificates.certificate_issue(domain_id=www.pk) is not None
    query = "?server_name=www.example.test"

    for url in (
        f"{edge.certificates}{CERTIFICATE_PATH}{query}",
        f"{edge.certificates}{CERTIFICATE_PATH}/{query}",
        edge.certificate_url(secret="not-the-secret") + query,
        edge.certificate_url(secret=edge.secret()[:-1]) + query,
    ):
        status, body = local_process_asks(url)
        assert status == 403, url
        assert b"PRIVATE KEY" not in body and body == b"", url
    # The edge's Caddy, with the secret, still gets it (and serves it: tests/domains/edge).
    status, body = local_process_asks(edge.certificate_url() + query)
    assert status == 200 and b"PRIVATE KEY" in body
    edge.handshake("www.example.test")


def test_the_secret_and_caddys_configuration_are_readable_by_the_edges_user_only(edge):
    for name in ("caddy.json", SECRET_FILE):
        mode = stat.S_IMODE((edge.edge_dir / name).stat().st_mode)
        assert mode == 0o600, f"{name}: {oct(mode)}"
    config = (edge.edge_dir / "caddy.json").read_text()
    assert f"{CERTIFICATE_PATH}/{edge.secret()}" in config
    assert len(edge.secret()) >= 43  # 32 random bytes, urlsafe base64


@pytest.mark.parametrize(("debug", "listen"), [(True, "127.0.0.1:8443"), (False, ":8443")])
def test_under_debug_the_edge_listens_on_loopback_only(settings, tmp_path, debug, listen):
    settings.DEBUG, settings.HTTPS_PORT, settings.EDGE_HTTP = debug, 8443, False
    servers = caddy.config(data_dir=tmp_path, secret=SECRET)["apps"]["http"]["servers"]
    assert servers["https"]["listen"] == [listen]


def test_the_placeholder_is_the_edges_own_never_a_domains(endpoint, active, settings):
    with CaptureQueriesContext(connection) as queries:
        status, body = call(endpoint, f"{FALLBACK_PATH}/{SECRET}")
    assert status == "200 OK" and len(queries) == 0  # the same for every name: no row read
    placeholder = x509.load_pem_x509_certificate(body)
    assert is_fallback(placeholder) and placeholder.issuer == placeholder.subject
    names = placeholder.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert names.value.get_values_for_type(x509.DNSName) == ["no-certificate.invalid"]
    assert active.pem.strip() not in body.decode() and b"PRIVATE KEY" in body
    for secret in ("", "wrong", SECRET[:-1]):
        assert call(endpoint, f"{FALLBACK_PATH}/{secret}") == ("403 Forbidden", b"")
    assert call(endpoint, f"{FALLBACK_PATH}/{SECRET}", remote="10.0.0.7")[0] == "403 Forbidden"
    # Caddy asks for it second, after the name's own.
    managers = caddy.config(data_dir=Path(settings.EDGE_DIR), secret=SECRET)["apps"]["tls"]
    [policy] = managers["automation"]["policies"]
    assert [m["url"].split(":", 2)[2].split("/", 1)[1] for m in policy["get_certificate"]] == [
        f"certificate/{SECRET}",
        f"fallback/{SECRET}",
    ]
