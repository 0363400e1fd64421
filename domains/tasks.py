"""Celery tasks, and the one place that queues domain work.

Tasks are thin adapters over domains/services: they take primary keys, name their
queue, acknowledge late and keep no result (both the settings' defaults), and are
idempotent, since every state change
underneath is a conditional update or happens under a row lock. Services never
queue anything; they return NextSteps, and `enqueue` queues them after the
transaction commits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from domains import metrics, policy
from domains.channels import CHANNELS
from domains.choices import TEMPORARY_CHECK_CODES
from domains.models import Domain
from domains.retry import RetryLater
from domains.services import certificates, keys, platformcertificate, scheduling, verification
from domains.services.audit import audit_purge
from domains.services.custom_domains import domain_request_check
from domains.services.nextsteps import NextSteps
from domains.services.scheduling import BATCH_SIZE, chunked
from petstore.queueing import QueueTask, queue_task

# One retry per step of the backoff (domains.policy.TASK_RETRY_BACKOFF), then the sweep.
MAX_RETRIES = len(policy.TASK_RETRY_BACKOFF)


def retry_countdown(retries: int, *, at_least: float = 0.0) -> float:
    """Seconds before the next retry, jittered (domains.policy.task_retry_delay)."""
    return policy.task_retry_delay(retries, at_least=at_least).total_seconds()


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
    for channel, delivery_id in steps.deliveries:
        deliver.apply_async_on_commit((channel, delivery_id), queue=CHANNELS[channel].queue)


def request_check(*, domain: Domain, actor: User | None) -> Domain:
    """Verify / Re-verify from a screen or the admin: a new window opens now, and a worker
    checks after the commit (the sweep checks it anyway if the queueing is lost)."""
    domain_request_check(domain=domain, actor=actor)
    check_domain.delay_on_commit(domain.pk)
    return domain


@queue_task(max_retries=0, queue=settings.CHECKS_QUEUE)
def check_domain(domain_id: int) -> None:
    """The check a person asked for (Verify / Re-verify): the sweep's concurrent path with
    a short deadline (DOMAINS_VERIFY_DEADLINE), and no retry here: a timeout is recorded
    as the temporary failure it is, with the backoff's next check, which the sweep runs.
    So a name server that never answers holds a worker for the deadline once per Verify."""
    deadline = min(settings.DOMAINS_VERIFY_DEADLINE, settings.DOMAINS_DNS_LIFETIME)
    recorded = verification.domain_check(domain_id=domain_id, deadline=deadline)
    enqueue(recorded.next_steps)


@queue_task(bind=True, max_retries=MAX_RETRIES, queue=settings.CHECKS_QUEUE)
def check_domains(self: QueueTask[Any, Any], domain_ids: list[int]) -> None:
    """The sweep's batch: check them all at once; retry only the temporary failures."""
    recorded = verification.domain_check_many(domain_ids=domain_ids)
    enqueue(recorded.next_steps)
    temporary = [d.pk for d in recorded.domains if d.check_code in TEMPORARY_CHECK_CODES]
    if temporary and self.request.retries < MAX_RETRIES:
        raise self.retry(args=(temporary,), countdown=retry_countdown(self.request.retries))


@queue_task(bind=True, max_retries=MAX_RETRIES, queue=settings.CERTIFICATES_QUEUE)
def issue_certificate(self: QueueTask[Any, Any], domain_id: int) -> None:
    _retry_later(self, certificates.certificate_issue, [domain_id])


@queue_task(bind=True, max_retries=MAX_RETRIES, queue=settings.CERTIFICATES_QUEUE)
def issue_certificates(self: QueueTask[Any, Any], domain_ids: list[int]) -> None:
    """Issuance for a batch of domains verified together; retry only the temporary failures."""
    _retry_later(self, certificates.certificate_issue, domain_ids, batch=True)


@queue_task(bind=True, max_retries=MAX_RETRIES, queue=settings.CERTIFICATES_QUEUE)
def renew_certificate(self: QueueTask[Any, Any], domain_id: int) -> None:
    _retry_later(self, certificates.certificate_renew, [domain_id])


def _retry_later(
    task: QueueTask[Any, Any],
    service: Callable[..., object],
    domain_ids: list[int],
    *,
    batch: bool = False,
) -> None:
    """Run a certificate service for each domain; the ones that failed for now (RetryLater:
    a CAA lookup that timed out, a CA not done yet) are retried by the same task after the
    backoff, never sooner than the longest wait one of them asked for.

    A task for one domain retries itself and, past MAX_RETRIES, fails with the last reason;
    a batch retries only the domains that must wait and, past the limit, leaves them to the
    sweep, so one slow domain never fails the others.
    """
    waiting: list[int] = []
    failure: RetryLater | None = None
    asked = 0.0
    for domain_id in domain_ids:
        try:
            service(domain_id=domain_id)
        except RetryLater as exc:
            waiting.append(domain_id)
            failure = exc
            asked = max(asked, exc.retry_after)
    if failure is None:
        return
    countdown = retry_countdown(task.request.retries, at_least=asked)
    if not batch:
        raise task.retry(exc=failure, countdown=countdown) from failure
    if task.request.retries < MAX_RETRIES:
        raise task.retry(args=(waiting,), countdown=countdown)


@queue_task(queue=settings.CHECKS_QUEUE)
def sweep() -> None:
    enqueue(scheduling.sweep())
    metrics.sweep_finished()


@queue_task(queue=settings.CERTIFICATES_QUEUE)
def renew_certificates() -> None:
    """Hourly: the CA's windows read again where it is time, then every renewal due."""
    certificates.renewal_windows_refresh()
    for domain_id in certificates.certificates_due_for_renewal():
        renew_certificate.delay(domain_id)


@queue_task(queue=settings.CERTIFICATES_QUEUE)
def renew_platform_certificate() -> None:
    """Hourly: the platform's own certificate issued or renewed over DNS-01 when it is due."""
    platformcertificate.platform_certificate_renew()


@queue_task(queue=settings.CHECKS_QUEUE)
def purge_audit_log() -> None:
    """Daily: the audit entries past AUDIT_LOG_RETENTION_DAYS go (the database refuses
    every other deletion)."""
    audit_purge()


@queue_task(queue=settings.CHECKS_QUEUE)
def dispatch_deliveries() -> None:
    """Beat: every due delivery of every channel, on its channel's queue."""
    for channel in CHANNELS.values():
        for delivery_id in channel.due():
            deliver.apply_async((channel.name, delivery_id), queue=channel.queue)


@queue_task(max_retries=0)
def deliver(channel: str, delivery_id: int) -> None:
    """One attempt (for email, the project's digest); its retry is the delivery's
    next_attempt_at, which the beat reads (a message queued twice is one attempt: the claim
    is a conditional UPDATE)."""
    CHANNELS[channel].deliver(delivery_id=delivery_id)


@queue_task(queue=settings.CHECKS_QUEUE)
def tell_expiring_keys() -> None:
    """Hourly: the projects of each API key that ends within a week are told, once."""
    keys.keys_expiring_tell()
