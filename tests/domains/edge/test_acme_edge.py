"""A certificate from a real ACME CA (Pebble), served by the real TLS edge.

Everything runs as in production, each in its own process: the owner adds a
domain and chooses Verify on the dashboard; a Celery worker on DOMAINS_CA=acme
checks the DNS and orders the certificate; Pebble fetches the HTTP-01 challenge
from our web process (the one the edge proxies to); the edge (Caddy and
its certificate endpoint) presents the certificate. Also: a worker killed with
SIGKILL mid-order still ends with exactly one certificate, and a CAA record
naming another CA blocks the order with its reason.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from cryptography import x509
from django.utils import timezone

from domains import tasks
from domains.choices import CertState, CheckCode, State
from domains.models import AcmeChallenge, AcmeOrder, Certificate, Domain
from domains.policy import cert_lost_at_sweep
from domains.services import scheduling
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET
from tests.fixtures.edge import domainstatus, serial
from tests.fixtures.worker import wait_until
from tests.processes import paused, wait_for

pytestmark = [pytest.mark.acme, pytest.mark.django_db(transaction=True)]

HOST = "www.example.test"
PAGE = "<h1>Alice's shop</h1>"


@pytest.fixture
def acme_http_port(edge) -> int:
    """Pebble fetches HTTP-01 challenges from the edge's own web process."""
    return int(edge.web.rsplit(":", 1)[1])


@pytest.fixture
def worker(pebble, start_worker):
    """A worker started once the platform's CA settings point at Pebble."""
    return start_worker()


@pytest.fixture
def added(dns_server, shop, alice) -> Domain:
    """alice's domain, added, with the CNAME to the platform's target in place; the target
    resolves to this machine, so Pebble's HTTP-01 request reaches our web process."""
    dns_server.remove(TARGET)
    dns_server.add(TARGET, "A", "127.0.0.1")
    dns_server.add(HOST, "CNAME", TARGET + ".")
    return domain_add(project=shop, hostname=HOST, actor=alice)


def verify(client) -> None:
    """Verify (or Re-verify), as the owner chooses it on the domain's page."""
    response = client.post(f"/dashboard/projects/shop/domains/{HOST}/verify/")
    assert response.status_code == 302


def leaf(certificate: Certificate) -> x509.Certificate:
    return x509.load_pem_x509_certificates(certificate.pem.encode())[0]


def test_verify_gets_pebbles_certificate_and_the_edge_serves_it(
    edge, pebble, worker, added, alice_client
):
    verify(alice_client)

    domain = wait_until(added, worker, state=State.ACTIVE)
    certificate = domain.certificate
    assert certificate is not None
    assert domain.cert_state == CertState.ISSUED
    leaf(certificate).verify_directly_issued_by(pebble.intermediate())
    # Pebble fetched the challenge from the edge's web process, and signed once.
    assert f"http://{HOST}:{pebble.http_port}/.well-known/acme-challenge/" in pebble.log()
    assert len(pebble.orders()) == 1
    assert pebble.issued() == [certificate.serial]
    assert not AcmeOrder.objects.exists() and not AcmeChallenge.objects.exists()

    edge.shows(HOST, certificate.serial)
    presented = edge.handshake(HOST, cafile=pebble.root_file)

    assert serial(presented) == certificate.serial == domainstatus(HOST)["certificate"]["serial"]
    assert edge.get(HOST, "/", cafile=pebble.root_file) == (200, PAGE)
    actions = list(domain.events.order_by("created_at", "pk").values_list("action", flat=True))
    assert actions == ["added", "verify_requested", "verified", "certificate_issued"]


def _kill_while_pebble_validates(edge, pebble, worker, client) -> None:
    """The web process Pebble must reach is paused: the order cannot complete, and the
    worker is polling Pebble for the challenge's result when it dies."""
    with paused(edge.web_process):
        verify(client)
        wait_for(pebble.validations, timeout=30, interval=0.02, what="Pebble to validate")
        worker.kill()


def _kill_after_pebble_signed(edge, pebble, worker, client) -> None:
    """Pebble has signed; the worker waits a second before collecting the certificate
    (and storing it with the order forgotten, in one transaction): it dies in between."""
    verify(client)
    wait_for(pebble.issued, timeout=30, interval=0.02, what="Pebble to sign")
    worker.kill()


@pytest.mark.parametrize(
    "kill", [_kill_while_pebble_validates, _kill_after_pebble_signed], ids=["validating", "signed"]
)
def test_a_worker_killed_mid_order_still_ends_with_exactly_one_certificate(
    edge, pebble, worker, start_worker, added, alice_client, settings, kill
):
    kill(edge, pebble, worker, alice_client)

    # The kill landed mid-order: the order is recorded, no certificate is stored.
    order = AcmeOrder.objects.get(domain=added)
    assert Domain.objects.get(pk=added.pk).state == State.ISSUING
    assert not Certificate.objects.filter(domain=added).exists()
    # The whole worker died, so no one handed its task back to the broker. The sweep, as
    # beat runs it once the issuance is overdue, finds it and queues it again.
    rerun = start_worker()
    overdue = cert_lost_at_sweep() + timedelta(seconds=settings.DOMAINS_CERT_ISSUE_DELAY)
    with time_machine.travel(timezone.now() + overdue + timedelta(seconds=1)):
        steps = scheduling.sweep()
    assert steps.issue_now == [added.pk]
    tasks.enqueue(steps)

    domain = wait_until(added, rerun, state=State.ACTIVE)
    certificate = domain.certificate
    assert certificate is not None
    assert Certificate.objects.filter(domain=added).count() == 1
    assert not AcmeOrder.objects.exists() and not AcmeChallenge.objects.exists()
    # The run after the kill resumed the same order: Pebble placed one and signed once.
    assert pebble.orders() == [order.url.rsplit("/", 1)[1]]
    assert pebble.issued() == [certificate.serial]
    edge.shows(HOST, certificate.serial)
    assert serial(edge.handshake(HOST, cafile=pebble.root_file)) == certificate.serial


def test_a_caa_record_naming_another_ca_blocks_the_order_with_its_reason(
    edge, pebble, worker, added, alice_client, dns_server, settings
):
    dns_server.add("example.test", "CAA", '0 issue "otherca.example"')

    verify(alice_client)

    domain = wait_until(added, worker, cert_state=CertState.BLOCKED)
    assert domain.state == State.VERIFIED
    assert domain.cert_code == CheckCode.CAA_BLOCKED
    assert 'example.test CAA 0 issue "otherca.example"' in domain.cert_message
    assert not AcmeOrder.objects.exists()
    assert pebble.orders() == []  # nothing was asked of Pebble
    edge.shows(HOST, None)

    # The record was the reason: once the owner removes it, Re-verify gets the certificate.
    dns_server.remove("example.test", "CAA")
    settings.DOMAINS_VERIFY_COOLDOWN = 0
    verify(alice_client)

    certificate = wait_until(added, worker, state=State.ACTIVE).certificate
    assert certificate is not None
    assert pebble.issued() == [certificate.serial]
    edge.shows(HOST, certificate.serial)
    assert serial(edge.handshake(HOST, cafile=pebble.root_file)) == certificate.serial
