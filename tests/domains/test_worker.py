"""End to end on a real Celery worker: Verify, then the certificate, then active."""

from __future__ import annotations

import signal
import time

from cryptography import x509

from domains import tasks
from domains.choices import State
from domains.models import Domain
from domains.policy import DOCTOR_IN_FLIGHT
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET, in_step
from tests.processes import wait_for


def test_domain_goes_from_pending_to_active_with_a_certificate(
    celery_worker, dns_server, shop, alice
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    assert domain.state == State.PENDING

    tasks.request_check(domain=domain, actor=alice)  # queued after commit

    def active():
        domain.refresh_from_db()
        return domain.state == State.ACTIVE

    wait_for(active, timeout=60, what="the domain to become active")
    certificate = domain.certificate
    assert certificate is not None
    cert = x509.load_pem_x509_certificate(certificate.pem.encode())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["www.example.test"]
    assert domain.check_code == "ok"
    assert Domain.objects.get(pk=domain.pk).certificates.count() == 1
    actions = list(domain.events.order_by("created_at", "pk").values_list("action", flat=True))
    assert actions == ["added", "verify_requested", "verified", "certificate_issued"]


def test_a_certificate_is_issued_at_once_while_a_silent_name_server_holds_the_checks(
    start_worker, dns_server, shop, alice, settings
):
    """The checks worker is busy with a name whose server never answers; a certificate
    waits for none of it, on the certificates queue's own worker."""
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 30.0
    settings.DOMAINS_VERIFY_DEADLINE = 30.0
    checks = start_worker(settings.CHECKS_QUEUE)
    start_worker(settings.CERTIFICATES_QUEUE)
    dns_server.blackhole("silent.example.test")
    silent = domain_add(project=shop, hostname="silent.example.test", actor=alice)
    tasks.request_check(domain=silent, actor=alice)
    wait_for(
        lambda: "Task domains.tasks.check_domain[" in checks.log(),
        timeout=20,
        what="the checks worker to take the silent name's check",
    )
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    www = domain_add(project=shop, hostname="www.example.test", actor=alice)
    Domain.objects.filter(pk=www.pk).update(**in_step(State.ISSUING))
    started = time.monotonic()
    tasks.issue_certificate.delay(www.pk)

    wait_for(
        lambda: Domain.objects.get(pk=www.pk).state == State.ACTIVE,
        timeout=15,
        what="the certificate, past the busy checks worker",
    )
    assert time.monotonic() - started < 15
    # The silent name's check still holds the checks worker.
    assert Domain.objects.get(pk=silent.pk).checked_at is None
    # Killed, not stopped: a warm shutdown would wait out the rest of the silent check
    # (15 s, the fixture's grace, of its 30 s) for nothing the test looks at.
    checks.kill()


def test_a_checks_worker_asked_to_stop_ends_a_check_of_silent_addresses_within_its_deadline(
    start_worker, zone, www, silent_everywhere, settings
):
    """A Verify of a zone of two hundred silent name-server addresses is under way when the
    checks worker is told to stop (SIGTERM, a warm shutdown that waits for its tasks): the
    check ends with its deadline and is recorded, and the worker stops soon after."""
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 30.0
    settings.DOMAINS_VERIFY_DEADLINE = 2.0
    zone.of_silent_addresses(names=10, each=20)
    checks = start_worker(settings.CHECKS_QUEUE)
    tasks.request_check(domain=www, actor=www.project.owner)
    wait_for(
        lambda: len(silent_everywhere.queries) > 0,
        timeout=20,
        what="the check to ask the zone's servers",
    )
    checks.stop()  # SIGTERM; SIGKILL after 15 s

    # It stopped by itself, its check done: not killed at the end of its grace (the doctor
    # used to keep asking past the deadline, and the worker with it).
    assert checks.process.returncode != -signal.SIGKILL, checks.process.returncode
    assert Domain.objects.get(pk=www.pk).checked_at is not None  # finished, not cut short
    assert len(silent_everywhere.queries) == DOCTOR_IN_FLIGHT
