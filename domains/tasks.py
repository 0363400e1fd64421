"""Celery tasks, and the one place that queues domain work.

Tasks are thin adapters over domains/services: they take primary keys,
acknowledge late (settings), and are idempotent, since every state change
underneath is a conditional update or happens under a row lock. Services never
queue anything; they return NextSteps, and `enqueue` queues them after the
transaction commits.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from domains.choices import TEMPORARY_CHECK_CODES
from domains.models import Domain
from domains.pki import Pending
from domains.services import certificates, scheduling, verification
from domains.services.custom_domains import domain_request_check
from domains.services.nextsteps import NextSteps
from domains.services.scheduling import BATCH_SIZE, chunked
from petstore.queueing import QueueTask, queue_task

# Delays (seconds) before retrying a temporary DNS failure: 10s, 30s, 90s, 270s, 810s.
MAX_RETRIES = 5


def _retry_countdown(retries: int) -> int:
    return 10 * 3**retries


def _ca_countdown(pending: Pending, retries: int) -> float:
    """The backoff, never sooner than the CA's own Retry-After (RFC 8555 §6.6)."""
    return max(pending.retry_after, _retry_countdown(retries))


def enqueue(steps: NextSteps) -> None:
    """Queue what a service asked for, once the current transaction commits."""
    for chunk in chunked(steps.checks, BATCH_SIZE):
        check_domains.delay_on_commit(chunk)
    # Issuance waits for the CA's (simulated) delay: one task, or batches.
    delay = settings.DOMAINS_CERT_ISSUE_DELAY
    if len(steps.issue) == 1:
        issue_certificate.apply_async_on_commit((steps.issue[0],), countdown=delay)
    else:
        for chunk in chunked(steps.issue, BATCH_SIZE):
            issue_certificates.apply_async_on_commit((chunk,), countdown=delay)
    for domain_id in steps.issue_now:
        issue_certificate.delay_on_commit(domain_id)


def request_check(*, domain: Domain, actor: User | None) -> Domain:
    """Verify / Re-verify from a screen or the admin: a new window opens now, and a worker
    checks after the commit (the sweep checks it anyway if the queueing is lost)."""
    domain_request_check(domain=domain, actor=actor)
    check_domain.delay_on_commit(domain.pk)
    return domain


@queue_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def check_domain(self: QueueTask[Any, Any], domain_id: int) -> None:
    recorded = verification.domain_check(domain_id=domain_id)
    enqueue(recorded.next_steps)
    domain = recorded.domain
    temporary = domain is not None and domain.check_code in TEMPORARY_CHECK_CODES
    if temporary and self.request.retries < MAX_RETRIES:
        raise self.retry(countdown=_retry_countdown(self.request.retries))


@queue_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def check_domains(self: QueueTask[Any, Any], domain_ids: list[int]) -> None:
    """The sweep's batch: check them all at once; retry only the temporary failures."""
    recorded = verification.domain_check_many(domain_ids=domain_ids)
    enqueue(recorded.next_steps)
    temporary = [d.pk for d in recorded.domains if d.check_code in TEMPORARY_CHECK_CODES]
    if temporary and self.request.retries < MAX_RETRIES:
        raise self.retry(args=(temporary,), countdown=_retry_countdown(self.request.retries))


@queue_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def issue_certificate(self: QueueTask[Any, Any], domain_id: int) -> None:
    try:
        certificates.certificate_issue(domain_id=domain_id)
    except certificates.TemporaryDNSError as exc:
        raise self.retry(exc=exc, countdown=_retry_countdown(self.request.retries)) from exc
    except Pending as exc:
        raise self.retry(exc=exc, countdown=_ca_countdown(exc, self.request.retries)) from exc


@queue_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def issue_certificates(self: QueueTask[Any, Any], domain_ids: list[int]) -> None:
    """Issuance for a batch of domains verified together; retry only the temporary failures."""
    temporary, countdown = [], float(_retry_countdown(self.request.retries))
    for domain_id in domain_ids:
        try:
            certificates.certificate_issue(domain_id=domain_id)
        except certificates.TemporaryDNSError:
            temporary.append(domain_id)
        except Pending as exc:
            temporary.append(domain_id)
            countdown = max(countdown, _ca_countdown(exc, self.request.retries))
    if temporary and self.request.retries < MAX_RETRIES:
        raise self.retry(args=(temporary,), countdown=countdown)


@queue_task(bind=True, acks_late=True, max_retries=MAX_RETRIES, ignore_result=True)
def renew_certificate(self: QueueTask[Any, Any], domain_id: int) -> None:
    try:
        certificates.certificate_renew(domain_id=domain_id)
    except certificates.TemporaryDNSError as exc:
        raise self.retry(exc=exc, countdown=_retry_countdown(self.request.retries)) from exc
    except Pending as exc:
        raise self.retry(exc=exc, countdown=_ca_countdown(exc, self.request.retries)) from exc


@queue_task(acks_late=True, ignore_result=True)
def sweep() -> None:
    enqueue(scheduling.sweep())


@queue_task(acks_late=True, ignore_result=True)
def renew_certificates() -> None:
    for domain_id in certificates.certificates_due_for_renewal():
        renew_certificate.delay(domain_id)
