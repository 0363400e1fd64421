"""Redis restarted empty, and Redis hung: the workers outlive both and consume again.

Celery workers started from Procfile.production's own lines (the checks worker's thread
pool, the certificates worker's prefork pool, gossip and heartbeats as in production) and
the web server, on a Redis server of the test's own, so the test can kill it, start it
again empty on the same port, or SIGSTOP it. The shared Redis is never touched.
"""

from __future__ import annotations

import contextlib
import time

import requests

from domains.choices import State
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from petstore.apikeys.services import api_key_issue
from petstore.celery import app
from petstore.models import TaskFailure
from tests.fixtures.domains import TARGET
from tests.processes import Worker, paused, service_env, wait_for, web_server, workers_running

# What a client of the API may wait for an answer while Redis is hung.
ANSWER_WITHIN = 5.0


@contextlib.contextmanager
def production_workers(settings, tmp_path, **extra: str):
    """The checks and the certificates workers of Procfile.production, stopped at the end."""
    env = service_env(settings, DB_CONN_MAX_AGE="0", **extra)
    with workers_running(
        Worker(env, tmp_path, "checks", production="worker"),
        Worker(env, tmp_path, "certificates", production="certificates"),
    ) as started:
        yield started


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


def timed(method: str, url: str, **kwargs) -> tuple[requests.Response, float]:
    began = time.monotonic()
    response = requests.request(method, url, timeout=30, **kwargs)
    return response, time.monotonic() - began


def test_a_hung_redis_hangs_nothing(
    transactional_db, own_redis, settings, tmp_path, hostile_dns, dns_server, shop, alice
):
    settings.API_ADDRESS_RATE_LIMIT = settings.API_RATE_LIMIT = "100/min"  # on, in Redis
    settings.API_FAILED_KEY_RATE_LIMIT = "30/min"  # asked before a key not kept is looked up
    settings.DOMAINS_DNS_TIMEOUT, settings.DOMAINS_DNS_LIFETIME = 8.0, 10.0
    settings.DOMAINS_VERIFY_DEADLINE = 10.0
    # Certificate work not done within five sweeps is lost and queued again: 5 s here.
    sweeps = {"DOMAINS_SWEEP_INTERVAL": "1"}
    settings.DOMAINS_CERT_ISSUE_DELAY = 0.0
    for name in ("www.example.test", "api.example.test"):
        dns_server.add(name, "CNAME", TARGET + ".")
    www, api = (
        domain_add(project=shop, hostname=n, actor=alice)
        for n in ("www.example.test", "api.example.test")
    )
    known, fresh = (api_key_issue(user=alice).plaintext for _ in range(2))
    with (
        web_server(service_env(settings), tmp_path) as base,
        production_workers(settings, tmp_path, **sweeps) as workers,
    ):
        checks = workers[0]
        assert requests.get(base + "/v1/pets", headers={"Authorization": f"Bearer {known}"}).ok
        assert requests.get(base + "/readyz").status_code == 200
        # A check under way when Redis hangs: its DNS question held until then.
        hostile_dns.mode = "hold"
        send(own_redis.url(1), "domains.tasks.check_domain", api.pk)
        wait_for(hostile_dns.held.is_set, timeout=20, what="the check to ask the DNS")

        with paused(own_redis.process):  # accepts connections, answers nothing
            for key in (known, fresh):  # a key this process keeps, and one it must look up
                auth = {"Authorization": f"Bearer {key}"}
                listed, took = timed("GET", base + "/v1/pets", headers=auth)
                assert listed.status_code == 200 and took < ANSWER_WITHIN, took
            ready, took = timed("GET", base + "/readyz")
            assert ready.status_code == 503 and took < ANSWER_WITHIN, took
            assert ready.json()["checks"]["database"] == "ok"
            assert ready.json()["checks"]["broker"].startswith("error")
            # Verify: recorded now, its check queued later (the message cannot be).
            verify, took = timed(
                "POST", base + "/v1/projects/shop/domains/www.example.test/verify",
                headers={"Authorization": f"Bearer {known}"},
            )  # fmt: skip
            assert verify.status_code == 202 and took < ANSWER_WITHIN, took
            assert Domain.objects.get(pk=www.pk).next_check_at is not None
            # The worker's check ends while Redis is still hung: the issuance it asks for
            # is not queued (the sweep will), and nothing waits for Redis.
            hostile_dns.mode = "forward"
            wait_for(
                lambda: (
                    "Task domains.tasks.check_domain[" in checks.log()
                    and "succeeded" in checks.log()
                ),
                timeout=ANSWER_WITHIN * 2,
                what="the check to end\n" + checks.log()[-3000:],
            )
            assert Domain.objects.get(pk=api.pk).state == State.ISSUING
            not_queued = TaskFailure.objects.filter(kind="enqueue").values_list(
                "task_name", flat=True
            )
            assert set(not_queued) == {
                "domains.tasks.check_domain",
                "domains.tasks.issue_certificate",
            }

        wait_for(
            lambda: requests.get(base + "/readyz").status_code == 200,
            timeout=30,
            what="the web process to be ready again",
        )

        # What beat sends every interval: the sweep queues the due check and the lost issuance.
        def swept_active() -> bool:
            send(own_redis.url(1), "domains.tasks.sweep")
            return Domain.objects.filter(state=State.ACTIVE).count() == 2

        wait_for(
            swept_active,
            timeout=60,
            interval=1.0,
            what="both domains to become active\n" + "".join(w.log()[-3000:] for w in workers),
        )
        for worker in workers:
            assert worker.process.poll() is None, worker.log()[-3000:]
