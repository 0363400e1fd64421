"""Redis down (cache and broker): the API keeps answering, Verify on the dashboard
records the request and says a check is under way; when Redis is back, the
scheduled sweep queues the work and the worker finishes it. Nothing asked is lost.

Runs the web server and a real worker on a Redis server of the test's own (the shared
one is never stopped), on the test's PostgreSQL database.
"""

from __future__ import annotations

import re

import requests
from django.test import Client
from django.utils import timezone

from domains.choices import State
from domains.models import Domain, DomainEvent
from domains.services.custom_domains import domain_add
from pets.models import Category, Pet
from petstore.apikeys.services import api_key_issue
from petstore.celery import app
from petstore.models import TaskFailure
from tests.fixtures.domains import TARGET
from tests.processes import service_env, wait_for, web_server


def _csrf_token(html: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert found is not None, "the form carries a CSRF token"
    return found.group(1)


def test_redis_outage_loses_nothing(
    transactional_db, own_redis, settings, tmp_path, dns_server, shop, alice, request
):
    settings.API_ADDRESS_RATE_LIMIT = settings.API_RATE_LIMIT = "100/min"  # on, in Redis
    settings.API_FAILED_KEY_RATE_LIMIT = "30/min"
    settings.DOMAINS_CERT_ISSUE_DELAY = 1.0
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    www = domain_add(project=shop, hostname="www.example.test", actor=alice)
    key = api_key_issue(user=alice).plaintext
    dogs = Category.objects.create(name="Dogs")
    session = Client()
    session.force_login(alice)
    browser = requests.Session()
    browser.cookies.set("sessionid", session.cookies["sessionid"].value)
    auth = {"Authorization": f"Bearer {key}"}

    with web_server(service_env(settings), tmp_path) as base:
        page = base + "/dashboard/projects/shop/domains/www.example.test/"
        form = browser.get(page)
        assert form.status_code == 200
        assert requests.get(base + "/v1/pets", headers=auth).status_code == 200

        own_redis.kill()

        # The API keeps answering: reads, writes, refusals (rate limits fail open).
        assert requests.get(base + "/v1/pets", headers=auth).status_code == 200
        created = requests.post(
            base + "/v1/pets", json={"name": "Outage", "categoryId": dogs.pk}, headers=auth
        )
        assert created.status_code == 201
        assert Pet.objects.filter(pk=created.json()["id"], name="Outage").exists()
        assert requests.get(base + "/v1/pets").status_code == 401
        wrong = {"Authorization": f"Bearer {key[:-4]}AAAA"}
        assert requests.get(base + "/v1/pets", headers=wrong).status_code == 401
        # Verify: recorded, and the page says a check is under way.
        verify = browser.post(
            page + "verify/",
            data={"csrfmiddlewaretoken": _csrf_token(form.text)},
            headers={"Referer": page},
        )
        assert verify.status_code == 200 and verify.url == page
        assert "Check queued" in verify.text
        status = browser.get(page + "status.json").json()
        assert status["check_in_progress"] is True and status["live"] is True
        assert DomainEvent.objects.filter(domain=www, action="verify_requested").exists()
        asked = Domain.objects.get(pk=www.pk)
        assert asked.state == State.PENDING
        assert asked.next_check_at is not None and asked.next_check_at <= timezone.now()
        lost = TaskFailure.objects.get(task_name="domains.tasks.check_domain", kind="enqueue")
        assert lost.count >= 1
        # The probes say what is wrong instead of hanging.
        ready = requests.get(base + "/readyz", timeout=10)
        assert ready.status_code == 503 and ready.json()["checks"]["database"] == "ok"

        own_redis.start()  # back, and empty: the lost message is not in it
        worker = request.getfixturevalue("celery_worker")
        # What beat sends every minute: the sweep finds the due check and queues it.
        with app.connection_for_write(settings.CELERY_BROKER_URL) as connection:
            app.send_task("domains.tasks.sweep", connection=connection)
        wait_for(
            lambda: Domain.objects.get(pk=www.pk).state == State.ACTIVE,
            timeout=40,
            what="the swept domain to become active\n" + worker.log_path.read_text()[-2000:],
        )
        assert Domain.objects.get(pk=www.pk).certificates.count() == 1
        assert requests.get(base + "/readyz", timeout=10).status_code == 200
