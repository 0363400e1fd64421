"""A worker killed in the middle of a verification or an issuance: the task is
handed back to the broker (acks_late + reject_on_worker_lost), runs again on the
other worker, and the domain ends active with one certificate, not two.

Two real `celery -A petstore worker` processes (prefork, one child each). The
DNS server holds the task's query, so the kill lands mid-task for certain; the
victim stops consuming first, so the rerun happens on the other worker.
"""

from __future__ import annotations

import os
import signal

import pytest

from domains import tasks
from domains.choices import State
from domains.models import Domain
from domains.services.verification import domain_check
from petstore.celery import app
from tests.fixtures.domains import TARGET
from tests.processes import Worker, service_env, wait_for, workers_running


@pytest.fixture
def workers(transactional_db, settings, hostile_dns, tmp_path):
    # A held query must outlast the kill: the resolver waits up to 10 s.
    settings.DOMAINS_DNS_TIMEOUT, settings.DOMAINS_DNS_LIFETIME = 8.0, 10.0
    settings.DOMAINS_CERT_ISSUE_DELAY = 1.0
    env = service_env(settings, DB_CONN_MAX_AGE="0")
    app.control.purge()
    first, second = Worker(env, tmp_path, "first"), Worker(env, tmp_path, "second")
    with workers_running(first, second) as started:
        yield started


def _holder(workers: list[Worker], task: str) -> Worker:
    return wait_for(
        lambda: next((w for w in workers if f"Task {task}[" in w.log()), None),
        timeout=10,
        what=f"a worker to receive {task}",
    )


def _kill_mid_task(workers, hostile_dns, task: str) -> tuple[Worker, Worker]:
    wait_for(hostile_dns.held.is_set, timeout=20, what=f"{task} to ask the DNS server")
    victim = _holder(workers, task)
    survivor = next(w for w in workers if w is not victim)
    # The victim takes nothing more from the queue, so the rerun is the survivor's.
    for queue in app.amqp.queues:  # every queue: the victim consumes them all
        app.control.cancel_consumer(queue, destination=[victim.name], reply=True, timeout=5)
    children = victim.pool_children()
    assert children, "the victim's pool process"
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    hostile_dns.mode = "forward"
    return victim, survivor


def _ends_active_with_one_certificate(domain: Domain, victim: Worker, survivor: Worker, task):
    wait_for(
        lambda: Domain.objects.get(pk=domain.pk).state == State.ACTIVE,
        timeout=40,
        what="the domain to become active\n" + survivor.log()[-2000:],
    )
    assert Domain.objects.get(pk=domain.pk).certificates.count() == 1
    assert "WorkerLostError" in victim.log() or "SIGKILL" in victim.log()
    assert f"Task {task}[" in survivor.log() and "succeeded" in survivor.log()


@pytest.fixture
def www(www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")  # the owner did it right
    return www


def test_a_verification_killed_midway_runs_again_elsewhere(workers, hostile_dns, www, alice):
    hostile_dns.mode = "hold"
    tasks.request_check(domain=www, actor=alice)  # Verify: queued on commit
    victim, survivor = _kill_mid_task(workers, hostile_dns, "domains.tasks.check_domain")
    _ends_active_with_one_certificate(www, victim, survivor, "domains.tasks.check_domain")


def test_an_issuance_killed_midway_gives_one_certificate(workers, hostile_dns, www):
    tasks.enqueue(domain_check(domain_id=www.pk).next_steps)  # verified here; issued in 1 s
    assert Domain.objects.get(pk=www.pk).state == State.ISSUING
    hostile_dns.mode = "hold"  # the issue task's CAA question will hang
    victim, survivor = _kill_mid_task(workers, hostile_dns, "domains.tasks.issue_certificate")
    _ends_active_with_one_certificate(www, victim, survivor, "domains.tasks.issue_certificate")
