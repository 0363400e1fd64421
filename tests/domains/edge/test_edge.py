"""The TLS edge over real TLS: Caddy, its loopback certificate endpoint and the web server, as
production starts them, each handshake carrying the SNI a browser would send."""

from __future__ import annotations

import ssl
from io import StringIO
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.x509.oid import NameOID
from django.core.management import call_command
from django.utils import timezone

from domains.choices import State
from domains.edge.fallback import FALLBACK_NAME, is_fallback
from domains.models import Certificate, Domain
from domains.services import certificates
from domains.services.custom_domains import domain_remove
from tests.fixtures.domains import in_step
from tests.fixtures.edge import domainstatus, serial

pytestmark = pytest.mark.django_db(transaction=True)

HOST = "www.example.test"


@pytest.fixture
def active(www_on_edge) -> Domain:
    return www_on_edge


def test_the_handshake_gets_the_certificate_domainstatus_shows_and_the_page(edge, active):
    presented = edge.handshake(HOST)

    shown = domainstatus(HOST)["certificate"]
    assert serial(presented) == shown["serial"]
    issuer = presented.issuer.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert shown["issuer"] == issuer == "ca.petstore.localhost local CA"
    status, body = edge.get(HOST, "/menu?page=2")
    assert (status, body) == (200, "<h1>Alice's shop</h1>")


def test_after_remove_the_handshake_fails_within_the_caches_bound(edge, active, alice):
    edge.handshake(HOST)

    domain_remove(domain=active, actor=alice)

    edge.shows(HOST, None)
    with pytest.raises((ssl.SSLError, OSError)):
        edge.handshake(HOST)


def test_a_remove_closes_no_other_tenants_kept_alive_connection(edge, active, alice,
                                                                 bobs_on_edge):  # fmt: skip
    """Caddy holds no certificate: a change reloads nothing, so another tenant's idle
    connection outlives a Remove."""
    kept = edge.kept_alive(bobs_on_edge.hostname)
    kept.request("GET", "/")
    assert kept.getresponse().read() == b"<h1>Bob's place</h1>"
    opened = kept.sock

    domain_remove(domain=active, actor=alice)
    edge.shows(HOST, None)

    kept.request("GET", "/")  # an edge that had closed it: RemoteDisconnected
    assert kept.getresponse().read() == b"<h1>Bob's place</h1>"
    assert kept.sock is opened
    kept.close()


def test_a_stopped_domain_is_not_served_over_https(edge, active):
    Domain.objects.filter(pk=active.pk).update(**in_step(State.FAILED))
    edge.shows(HOST, None)


def test_a_renewed_certificate_is_served_without_a_restart(edge, active):
    first = serial(edge.handshake(HOST))
    Certificate.objects.filter(domain=active).update(renew_after=timezone.now())

    renewed = certificates.certificate_renew(domain_id=active.pk)

    assert renewed is not None and renewed.serial != first
    edge.shows(HOST, renewed.serial)
    assert serial(edge.handshake(HOST)) == renewed.serial
    assert edge.process.poll() is None  # the same edge, never restarted


def test_a_certificate_replaced_by_hand_is_served_and_the_old_one_no_longer(edge, active):
    """Staff deleting a compromised certificate's row and storing another, by any means:
    the database moves the edge version, whatever wrote the rows."""
    first = serial(edge.handshake(HOST))
    Certificate.objects.filter(domain=active).delete()
    edge.shows(HOST, None)
    Domain.objects.filter(pk=active.pk).update(**in_step(State.ISSUING))
    replaced = certificates.certificate_issue(domain_id=active.pk)
    assert replaced is not None and replaced.serial != first
    edge.shows(HOST, replaced.serial)


def test_a_name_with_no_live_domain_gets_the_placeholder_and_the_edge_issues_none(edge, active):
    for name in ("stranger.example.test", "example.test", "localhost"):
        # A verifying client refuses it as what it is, not "tlsv1 alert internal error".
        with pytest.raises(ssl.SSLCertVerificationError, match="self-signed certificate"):
            edge.handshake(name)
        placeholder = edge.handshake(name, verify=False)
        assert is_fallback(placeholder)
        assert placeholder.subject.rfc4514_string() == (
            "CN=No certificate for this name here yet,O=Petstore edge"
        )
        names = placeholder.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        assert names.value.get_values_for_type(x509.DNSName) == [FALLBACK_NAME]
        assert edge.presented(name) is None  # no certificate of its own
    # Past the warning (curl -k, a browser's "proceed"): the web process's plain answer.
    assert edge.get("stranger.example.test", verify=False) == (
        404,
        "No project is published at stranger.example.test.\n",
    )
    # Caddy neither issued one itself nor asked whether it may: the placeholder came first.
    assert "obtaining certificate" not in edge.log()
    assert edge.handshake(HOST) and not is_fallback(edge.handshake(HOST))


def test_plain_http_on_the_live_domain_goes_to_https_keeping_path_and_query(edge, active):
    response = requests.get(
        edge.web + "/menu?page=2", headers={"Host": HOST}, allow_redirects=False, timeout=5
    )
    assert response.status_code == 301
    assert response.headers["Location"] == f"https://{HOST}:{edge.https_port}/menu?page=2"


def test_the_web_process_sees_the_request_as_https(edge, active):
    """No redirect loop: behind the edge the page is served, never sent to https again."""
    status, _ = edge.get(HOST, "/")
    assert status == 200


def test_the_certificate_endpoint_answers_loopback_only(edge, active):
    answer = requests.get(edge.certificate_url(), params={"server_name": HOST}, timeout=5)
    assert answer.status_code == 200
    assert "PRIVATE KEY" in answer.text and answer.headers["Cache-Control"] == "no-store"
    # Caddy may never issue a certificate itself.
    assert requests.get(edge.certificates + "/permission", timeout=5).status_code == 403


def test_staff_renewing_now_is_served_without_a_restart(edge, active):
    first = serial(edge.handshake(HOST))
    out = StringIO()
    call_command("renewcertificate", HOST, stdout=out)
    renewed = domainstatus(HOST)["certificate"]["serial"]
    assert renewed != first and renewed in out.getvalue()
    edge.shows(HOST, renewed)
    assert serial(edge.handshake(HOST)) == renewed


def connections_to(port: int) -> set[int]:
    """The local ports of this host's established TCP connections to `port` (IPv4 loopback
    here): the edge's to the web process."""
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        if state == "01" and int(remote.split(":")[1], 16) == port:
            ports.add(int(local.split(":")[1], 16))
    return ports


def test_the_edge_keeps_its_connection_to_the_web_process_between_requests(edge, active):
    """gunicorn's sync workers closed every connection: the edge opened one per request."""
    web_port = int(edge.web.rsplit(":", 1)[1])
    assert edge.get(HOST, "/")[0] == 200
    first = connections_to(web_port)
    assert first, "no connection from the edge to the web process stayed open"
    for _ in range(3):  # each client connection a new one
        assert edge.get(HOST, "/")[0] == 200
    assert connections_to(web_port) & first


def test_a_client_sending_its_body_slowly_holds_no_web_worker(edge, active):
    """The fixture's web server has one worker of one thread, which granian hands the body to
    as it arrives: were the edge to pass the body on as it trickles in, that thread would wait
    on the slow client and the page would wait on it."""
    stalled = edge.context().wrap_socket(edge.connect(), server_hostname=HOST)
    try:
        # The sign-in form reads its body for the CSRF token (given a cookie and a same
        # origin) before it answers.
        stalled.sendall(
            b"POST /accounts/login/ HTTP/1.1\r\nHost: localhost\r\n"
            b"Origin: https://localhost\r\nCookie: csrftoken=" + b"a" * 32 + b"\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 1000\r\n\r\nusername=al"
        )
        status, body = edge.get(HOST, "/")  # while the upload is still under way
        assert (status, body) == (200, "<h1>Alice's shop</h1>")
    finally:
        stalled.close()
