"""Faults on the way to an ACME certificate that are ours or the CA's, never the owner's:
a CA slow to sign holds no lock a check needs; a challenge the CA could not fetch because
our edge was down is retried until it passes, with no owner action."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from acme import messages
from django.db import connection
from django.test import Client

from devtools.sockets import free_port
from domains import pki
from domains.choices import Action, CertState, State
from domains.models import AcmeOrder, Certificate, Domain, DomainEvent
from domains.pki.acme import not_reached
from domains.retry import RetryLater
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check_many
from tests.fixtures.domains import TARGET
from tests.petstore.languages.english import visible_text

pytestmark = pytest.mark.acme

# How long the front holds the finalize request: the CA signing slowly.
SIGNING = 5.0


def test_an_issuance_in_progress_does_not_delay_a_check_batch_with_its_domain(
    verified, acme_front, edge, dns_server, shop, alice
):
    edge.up()
    dns_server.add("shop.example.test", "CNAME", TARGET + ".")
    other = domain_add(project=shop, hostname="shop.example.test", actor=alice)
    acme_front.finalize_delay = SIGNING
    outcome: list[object] = []

    def issue() -> None:
        try:
            outcome.append(certificates.certificate_issue(domain_id=verified.pk))
        finally:
            connection.close()

    issuing = threading.Thread(target=issue)
    issuing.start()
    assert acme_front.finalizing.wait(30), "the order was never finalized"

    started = time.monotonic()
    recorded = domain_check_many(domain_ids=[verified.pk, other.pk])
    took = time.monotonic() - started

    assert {domain.pk for domain in recorded.domains} == {verified.pk, other.pk}
    assert took < SIGNING / 2, f"the check batch waited {took:.1f} s for the CA"
    issuing.join(60)
    assert isinstance(outcome[0], Certificate)  # the slow CA signed; the result is stored
    assert Domain.objects.get(pk=verified.pk).state == State.ACTIVE


class Edge:
    """Our edge as Pebble meets it on its HTTP-01 port: passing requests on to the live
    server, answering 502 (its web processes gone), or not there at all (refused)."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.port = free_port()
        self.failing = False
        self.server: ThreadingHTTPServer | None = None

    def up(self) -> None:
        edge = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if edge.failing:
                    self.send_response(502)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                reply = requests.get(
                    edge.upstream + self.path, headers={"Host": self.headers["Host"]}, timeout=10
                )
                self.send_response(reply.status_code)
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            def log_message(self, format: str, *args: object) -> None:
                return None

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


@pytest.fixture
def edge(acme_live_server):
    edge = Edge(acme_live_server.url)
    yield edge
    edge.down()


@pytest.fixture
def acme_http_port(edge) -> int:
    """Pebble fetches the challenges from our edge, which the test takes down and back."""
    return edge.port


@pytest.mark.parametrize("fault", ["refused", "502"])
def test_a_domain_whose_first_validation_failed_because_the_edge_was_down_goes_active(
    verified, edge, pebble, fault, alice
):
    """The edge not there (connection refused), or there with its web processes gone (502):
    the CA refuses that order, and the platform tries again by itself, as the task's retry
    does, until the edge is back; the owner does nothing."""
    if fault == "502":
        edge.failing = True
        edge.up()

    with pytest.raises(pki.NotReached) as first:
        certificates.certificate_issue(domain_id=verified.pk)

    waiting = Domain.objects.get(pk=verified.pk)
    assert waiting.state == State.ISSUING  # never parked for a Re-verify
    assert waiting.cert_state == CertState.REQUESTED and waiting.cert_message == ""
    assert not AcmeOrder.objects.exists()  # invalid at the CA: the next try places a new one
    line = DomainEvent.objects.filter(domain=verified).latest("pk")
    assert line.action == Action.CERTIFICATE_DELAYED
    assert line.message.startswith("The certificate authority could not reach this domain")
    assert ("connection refused" if fault == "refused" else "502") in line.message
    assert line.message == str(first.value)
    german = Client(HTTP_ACCEPT_LANGUAGE="de")
    german.force_login(alice)
    text = visible_text(
        german.get(f"/dashboard/projects/shop/domains/{verified.hostname}/").content.decode()
    )
    assert "Die Zertifizierungsstelle konnte die Challenge dieser Domain über die Plattform" in text
    # The task retries it with the backoff, jittered, and no sooner.
    assert issubclass(pki.NotReached, RetryLater)

    edge.failing = False
    edge.up() if fault == "refused" else None
    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None
    assert Domain.objects.get(pk=verified.pk).state == State.ACTIVE
    assert len(pebble.orders()) == 2  # the refused order and the one that passed
    assert not DomainEvent.objects.filter(
        domain=verified, action__in=[Action.CERTIFICATE_BLOCKED, Action.REVERIFY_REQUESTED]
    ).exists()


@pytest.mark.parametrize(
    ("code", "detail", "ours"),
    [
        ("connection", 'Get "http://a.test/.well-known/acme-challenge/x": EOF', True),
        ("connection", "dial tcp 127.0.0.1:80: connect: connection refused", True),
        ("connection", "read tcp 127.0.0.1:80: read: connection reset by peer", True),
        ("connection", "Timeout during connect (likely firewall problem)", True),
        ("unauthorized", "The key authorization file from the server returned 502", True),
        ("connection", "lookup a.test on 127.0.0.1:53: no such host", False),
        ("unauthorized", "The key authorization file from the server did not match", False),
        ("dns", "DNS problem: NXDOMAIN looking up A for a.test", False),
    ],
)
def test_a_challenge_error_is_ours_only_when_the_ca_could_not_reach_us(code, detail, ours):
    """The CA's words decide: a connection that failed or a 5xx from us is our outage (the
    order is retried), a name that does not resolve or a wrong answer is the owner's."""
    error = messages.Error.with_code(code, detail=detail)
    assert not_reached(error) is ours
