"""Tasks and the beat sweep: small, idempotent; the sweep's batches and certificate work are
retried on temporary failures, a Verify's check ends at its deadline and is not."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
import time_machine
from celery.exceptions import Retry
from django.db import connection
from django.utils import timezone

from domains import tasks
from domains.choices import State
from domains.models import Certificate, Domain, DomainEvent
from domains.policy import SWEEPS_BEFORE_AGAIN, sweep_lease
from domains.services import certificates, scheduling
from domains.services.custom_domains import domain_remove, domain_request_check
from domains.services.verification import domain_check_many
from tests.fixtures import commits
from tests.fixtures.domains import TARGET, in_step, run_at_once
from tests.processes import wait_for


@pytest.mark.django_db
def test_the_sweep_queues_due_checks_once(www, django_capture_on_commit_callbacks):
    due = www.next_check_at
    with time_machine.travel(due, tick=False):
        with django_capture_on_commit_callbacks(execute=False):
            assert scheduling.sweep().checks == [www.pk]
        # Claimed with a lease: a second sweep (or a second beat) does not queue it again.
        assert scheduling.sweep().checks == []
    www.refresh_from_db()
    assert www.next_check_at == due + sweep_lease()


@pytest.mark.django_db
def test_a_lost_enqueue_is_picked_up_again_when_the_lease_ends(www):
    with time_machine.travel(www.next_check_at, tick=False) as clock:
        assert scheduling.sweep().checks == [www.pk]  # ... and the message is lost
        clock.shift(sweep_lease())
        assert scheduling.sweep().checks == [www.pk]


@pytest.mark.parametrize(("interval", "time_limit"), [(60.0, 300), (5.0, 300), (600.0, 30)])
def test_the_lease_outlasts_the_longest_a_task_may_run(settings, interval, time_limit):
    settings.DOMAINS_SWEEP_INTERVAL = interval
    settings.CELERY_TASK_TIME_LIMIT = time_limit
    assert sweep_lease() > timedelta(seconds=time_limit)
    assert sweep_lease() >= SWEEPS_BEFORE_AGAIN * timedelta(seconds=interval)


def _check_in_thread(check: Callable[[], object]) -> threading.Thread:
    def run() -> None:
        try:
            check()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _asked(dns_server, hostname: str) -> bool:
    return any(name == hostname for name, _ in list(dns_server.queries))


@pytest.mark.django_db(transaction=True)
def test_a_batch_still_running_past_its_lease_is_never_claimed_again(dns_server, www, settings):
    """The sweep claims www; its batch waits in the queue for all but a second of the lease,
    then runs (its name server silent) past the lease's end: a sweep meanwhile claims none."""
    dns_server.blackhole(www.hostname)
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 3.0
    assert www.next_check_at is not None
    with time_machine.travel(www.next_check_at, tick=True) as clock:
        assert scheduling.sweep().checks == [www.pk]
        clock.shift(sweep_lease() - timedelta(seconds=1))
        batch = _check_in_thread(lambda: domain_check_many(domain_ids=[www.pk]))
        wait_for(lambda: _asked(dns_server, www.hostname), what="the batch to ask the DNS")
        clock.shift(timedelta(seconds=2))  # past the sweep's lease: the batch still runs
        assert batch.is_alive()
        assert scheduling.sweep().checks == []
        batch.join()
    www.refresh_from_db()
    assert www.check_code == "dns_timeout"  # the batch's own result, recorded once


@pytest.mark.django_db(transaction=True)
def test_a_verify_check_still_running_is_never_claimed_by_the_sweep(dns_server, www, settings):
    """Verify makes the check due at once (the sweep's fallback if the queueing is lost);
    once the check runs, the sweep leaves it to its worker."""
    dns_server.blackhole(www.hostname)
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 3.0
    settings.DOMAINS_VERIFY_DEADLINE = 3.0
    domain_request_check(domain=www, actor=None, cooldown=False)
    check = _check_in_thread(lambda: tasks.check_domain(www.pk))
    wait_for(lambda: _asked(dns_server, www.hostname), what="the check to ask the DNS")
    assert check.is_alive()
    assert scheduling.sweep().checks == []
    check.join()


@pytest.mark.django_db
def test_failed_domains_are_not_swept(www):
    Domain.objects.filter(pk=www.pk).update(state=State.FAILED)
    with time_machine.travel(www.next_check_at + timedelta(hours=1), tick=False):
        assert scheduling.sweep().checks == []


@pytest.mark.django_db
def test_a_verify_check_records_a_temporary_failure_and_leaves_the_next_to_the_sweep(
    dns_server, www
):
    dns_server.servfail("www.example.test")
    result = tasks.check_domain.apply(args=(www.pk,), throw=True)
    assert result.state == "SUCCESS"  # no Celery retry: the backoff's next check is due
    www.refresh_from_db()
    assert www.check_code == "dns_servfail"
    assert www.state == State.PENDING
    assert www.next_check_at is not None and www.next_check_at > timezone.now()


@pytest.mark.django_db
def test_a_verify_check_of_a_silent_name_server_ends_at_its_deadline(dns_server, www, settings):
    """A name server that never answers holds the check for DOMAINS_VERIFY_DEADLINE, not
    for the DNS lifetime the sweep allows, and is not retried."""
    dns_server.blackhole("www.example.test")
    settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 1.0
    started = time.monotonic()
    result = tasks.check_domain.apply(args=(www.pk,), throw=True)
    assert time.monotonic() - started < 1.0 + 0.5
    assert result.state == "SUCCESS"
    www.refresh_from_db()
    assert www.check_code == "dns_timeout"
    assert www.state == State.PENDING and www.next_check_at is not None


@pytest.mark.django_db
def test_check_task_does_not_retry_a_misconfiguration(dns_server, www):
    dns_server.add("www.example.test", "A", "203.0.113.7")
    tasks.check_domain.apply(args=(www.pk,), throw=True)
    www.refresh_from_db()
    assert www.check_code == "conflicting_record"


@pytest.mark.django_db
def test_check_task_for_a_removed_domain_is_a_no_op(
    dns_server, www, alice, django_capture_on_commit_callbacks
):
    pk = www.pk
    # Set up right: were the domain still there, the check would verify it and queue a certificate.
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain_remove(domain=www, actor=alice)
    events = list(DomainEvent.objects.values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        tasks.check_domain.apply(args=(pk,), throw=True)
        tasks.issue_certificate.apply(args=(pk,), throw=True)
    assert queued == []
    assert not Domain.objects.filter(pk=pk).exists()
    assert not Certificate.objects.exists()
    assert list(DomainEvent.objects.values_list("pk", flat=True)) == events


@pytest.mark.django_db
def test_running_the_check_twice_requests_one_certificate(
    dns_server, www, django_capture_on_commit_callbacks
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        tasks.check_domain.apply(args=(www.pk,), throw=True)
        tasks.check_domain.apply(args=(www.pk,), throw=True)
    assert len(commits.queued(queued)) == 1
    assert Domain.objects.get(pk=www.pk).state == State.ISSUING


@pytest.mark.django_db
def test_issue_task_retries_when_caa_cannot_be_looked_up(dns_server, www):
    Domain.objects.filter(pk=www.pk).update(**in_step(State.ISSUING))
    dns_server.blackhole("www.example.test")
    with pytest.raises(Retry):
        tasks.issue_certificate.apply(args=(www.pk,), throw=True)
    assert not Certificate.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_issue_tasks_make_one_certificate(dns_server, www):
    Domain.objects.filter(pk=www.pk).update(**in_step(State.ISSUING))
    _, errors = run_at_once(lambda: certificates.certificate_issue(domain_id=www.pk), 4)
    assert errors == []
    assert Certificate.objects.filter(domain=www).count() == 1
    assert Domain.objects.get(pk=www.pk).state == State.ACTIVE


def test_beat_runs_the_sweep_and_the_renewals(settings):
    tasks_scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"domains.tasks.sweep", "domains.tasks.renew_certificates"} <= tasks_scheduled


def test_tasks_acknowledge_late_and_retry_with_a_limit():
    # A Verify's check is never retried by Celery (the sweep checks again).
    assert tasks.check_domain.acks_late is True and tasks.check_domain.max_retries == 0
    every = (
        tasks.check_domains,
        tasks.issue_certificate,
        tasks.issue_certificates,
        tasks.renew_certificate,
    )
    for task in every:
        assert task.acks_late is True
        assert task.max_retries == tasks.MAX_RETRIES
    for retries, (low, high) in enumerate([(10, 15), (30, 45), (90, 135)]):
        assert low <= tasks.retry_countdown(retries) <= high


def test_tasks_that_failed_together_retry_spread_out_not_in_lockstep():
    """After a CA outage every certificate task fails at once, and the CA asks each for the
    same Retry-After: their retries must not all arrive in the same second."""
    countdowns = [tasks.retry_countdown(0, at_least=60) for _ in range(50)]
    assert all(60 <= countdown <= 90 for countdown in countdowns)  # never before the CA asked
    assert len({round(countdown) for countdown in countdowns}) > 15
    assert max(countdowns) - min(countdowns) > 10
