"""Redis restarted empty, and Redis hung: the workers outlive both and consume again.

Celery workers started from Procfile.production's own lines (the checks worker's thread
pool, the certificates worker's prefork pool, gossip and heartbeats as in production) and
the web server, on a Redis server of the test's own, so the test can kill it, start it
again empty on the same port, or SIGSTOP it. The shared Redis is never touched.
"""

from __future__ import annotations

import contextlib
import time

from domains.choices import State
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from petstore.celery import app
from tests.fixtures.domains import TARGET
from tests.processes import Worker, service_env, wait_for


@contextlib.contextmanager
def production_workers(settings, tmp_path):
    """The checks and the certificates workers of Procfile.production, stopped at the end."""
    env = service_env(settings, DB_CONN_MAX_AGE="0")
    started = [
        Worker(env, tmp_path, "checks", production="worker"),
        Worker(env, tmp_path, "certificates", production="certificates"),
    ]
    try:
        for worker in started:
            worker.wait_ready()
        yield started
    finally:
        for worker in started:
            worker.stop()


def send(broker_url: str, task: str, *args) -> None:
    """Queue `task` on the test's own broker, routed as the platform routes it."""
    with app.connection_for_write(broker_url) as connection:
        app.send_task(task, args=args, connection=connection)


def test_workers_holding_messages_outlive_a_redis_restart(
    transactional_db, own_redis, settings, tmp_path, hostile_dns, dns_server, shop, alice
):
    # A held question must outlast the restart.
    settings.DOMAINS_DNS_TIMEOUT, settings.DOMAINS_DNS_LIFETIME = 8.0, 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 10.0
    settings.DOMAINS_CERT_ISSUE_DELAY = 0.0
    broker = own_redis.url(1)
    names = ["www.example.test", "api.example.test", "new.example.test"]
    for name in names:
        dns_server.add(name, "CNAME", TARGET + ".")
    www, api, new = (domain_add(project=shop, hostname=name, actor=alice) for name in names)
    assert domain_check(domain_id=www.pk).next_steps.issue == [www.pk]

    with production_workers(settings, tmp_path) as (checks, certificates):
        # Each worker holds an unacknowledged message: its task waits on a DNS question.
        hostile_dns.mode = "hold"
        send(broker, "domains.tasks.issue_certificate", www.pk)  # its CAA question
        send(broker, "domains.tasks.check_domain", api.pk)
        for worker, task in ((certificates, "issue_certificate"), (checks, "check_domain")):
            wait_for(
                lambda w=worker, t=task: f"Task domains.tasks.{t}[" in w.log(),
                timeout=20,
                what=f"the {worker.name} worker to receive {task}",
            )
        wait_for(lambda: len(hostile_dns.queries) >= 2, timeout=20, what="both to ask the DNS")

        own_redis.kill()
        time.sleep(2)
        own_redis.start()  # empty: what the workers held is not in it
        hostile_dns.mode = "forward"

        # Both tasks finish; both workers are still running and take new work: a check,
        # then the issuance it asks for.
        workers = (checks, certificates)
        wait_for(
            lambda: all(w.log().count("Connected to redis://") >= 2 for w in workers),
            timeout=30,
            what="both workers to connect again",
        )
        send(broker, "domains.tasks.check_domain", new.pk)
        wait_for(
            lambda: Domain.objects.filter(state=State.ACTIVE).count() == 3,
            timeout=60,
            what="every domain to become active\n" + "".join(w.log()[-3000:] for w in workers),
        )
        for worker in workers:
            assert worker.process.poll() is None, worker.log()[-3000:]
            assert "Unrecoverable error" not in worker.log()
        assert "Task domains.tasks.check_domain[" in checks.log()
