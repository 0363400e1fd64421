"""Celery tasks: thin adapters over domains.services / domains.certificates.

They take primary keys, acknowledge late (settings), and are idempotent: every
state change underneath is a conditional update or happens under a row lock.
"""

from __future__ import annotations

from celery import shared_task

from domains import certificates, checks, services

# Delays (seconds) before retrying a temporary DNS failure: 10s, 30s, 90s, 270s, 810s.
MAX_RETRIES = 5


def _retry_countdown(retries: int) -> int:
    return 10 * 3**retries


@shared_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def check_domain(self, domain_id: int) -> None:
    domain = services.domain_check(domain_id=domain_id)
    temporary = domain is not None and domain.check_code in checks.TEMPORARY_CODES
    if temporary and self.request.retries < self.max_retries:
        raise self.retry(countdown=_retry_countdown(self.request.retries))


@shared_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def check_domains(self, domain_ids: list[int]) -> None:
    """The sweep's batch: check them all at once; retry only the temporary failures."""
    domains = services.domain_check_many(domain_ids=domain_ids)
    temporary = [domain.pk for domain in domains if domain.check_code in checks.TEMPORARY_CODES]
    if temporary and self.request.retries < self.max_retries:
        raise self.retry(args=(temporary,), countdown=_retry_countdown(self.request.retries))


@shared_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def issue_certificate(self, domain_id: int) -> None:
    try:
        certificates.certificate_issue(domain_id=domain_id)
    except certificates.TemporaryDNSError as exc:
        raise self.retry(exc=exc, countdown=_retry_countdown(self.request.retries)) from exc


@shared_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def issue_certificates(self, domain_ids: list[int]) -> None:
    """Issuance for a batch of domains verified together; retry only the temporary failures."""
    temporary = []
    for domain_id in domain_ids:
        try:
            certificates.certificate_issue(domain_id=domain_id)
        except certificates.TemporaryDNSError:
            temporary.append(domain_id)
    if temporary and self.request.retries < self.max_retries:
        raise self.retry(args=(temporary,), countdown=_retry_countdown(self.request.retries))


@shared_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def renew_certificate(self, domain_id: int) -> None:
    try:
        certificates.certificate_renew(domain_id=domain_id)
    except certificates.TemporaryDNSError as exc:
        raise self.retry(exc=exc, countdown=_retry_countdown(self.request.retries)) from exc


@shared_task(acks_late=True, ignore_result=True)
def sweep() -> None:
    certificates.sweep()


@shared_task(acks_late=True, ignore_result=True)
def renew_certificates() -> None:
    for domain_id in certificates.certificates_due_for_renewal():
        renew_certificate.delay(domain_id)
