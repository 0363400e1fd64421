"""End to end on a real Celery worker: Verify, then the certificate, then active."""

from __future__ import annotations

import pytest
from cryptography import x509

from domains import tasks
from domains.choices import State
from domains.models import Domain
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET
from tests.processes import wait_for


@pytest.mark.needs_postgres
@pytest.mark.needs_redis
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
