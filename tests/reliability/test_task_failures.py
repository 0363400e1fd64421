"""Task failures are counted per task and kind, visible read-only to staff; an
enqueue that cannot reach the broker does not fail the request that asked."""

from __future__ import annotations

import threading

import pytest
from celery.signals import task_failure
from django.db import connection
from kombu.exceptions import OperationalError

from domains.tasks import check_domain, issue_certificate
from petstore.celery import app
from petstore.models import TaskFailure

DEAD_BROKER = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def _fail(task, exc: Exception) -> None:
    """What a worker sends when a task raises (celery.app.trace)."""
    task_failure.send(
        sender=task, task_id="t-1", exception=exc, args=(1,), kwargs={}, traceback=None, einfo=None
    )


@pytest.mark.django_db
def test_failures_are_counted_per_task_and_kind_with_the_last_error():
    _fail(check_domain, RuntimeError("first"))
    _fail(check_domain, ValueError("second"))
    _fail(issue_certificate, OSError("disk full"))
    rows = {(r.task_name, r.kind): r for r in TaskFailure.objects.all()}
    checks = rows[("domains.tasks.check_domain", "failed")]
    assert checks.count == 2
    assert checks.last_error == "ValueError: second"
    assert rows[("domains.tasks.issue_certificate", "failed")].count == 1
    assert len(rows) == 2


@pytest.mark.django_db
def test_an_enqueue_without_broker_is_counted_and_does_not_raise():
    dead = app.connection_for_write(DEAD_BROKER)
    try:
        assert check_domain.apply_async((123,), connection=dead) is None
        assert check_domain.apply_async((124,), connection=dead) is None
    finally:
        dead.release()
    row = TaskFailure.objects.get(task_name="domains.tasks.check_domain")
    assert (row.kind, row.count) == ("enqueue", 2)
    assert "OperationalError" in row.last_error


@pytest.mark.django_db
def test_inside_a_running_task_a_failed_publish_still_raises():
    dead = app.connection_for_write(DEAD_BROKER)
    # celery-types gives push_request the task's own parameters; it takes the request's fields.
    check_domain.push_request(called_directly=False, id="running", retries=0)  # type: ignore[call-arg]
    try:
        with pytest.raises(OperationalError):
            check_domain.apply_async((123,), connection=dead)
    finally:
        check_domain.pop_request()
        dead.release()


@pytest.mark.django_db(transaction=True)
def test_concurrent_failures_are_all_counted():
    def fail_many():
        try:
            for _ in range(25):
                _fail(check_domain, RuntimeError("boom"))
        finally:
            connection.close()

    threads = [threading.Thread(target=fail_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert TaskFailure.objects.get(task_name="domains.tasks.check_domain").count == 200


@pytest.mark.django_db
def test_staff_see_the_counts_read_only_in_the_admin(client, carol):
    _fail(check_domain, RuntimeError("resolver exploded"))
    row = TaskFailure.objects.get()
    client.force_login(carol)
    listing = client.get("/admin/petstore/taskfailure/")
    assert listing.status_code == 200
    assert b"domains.tasks.check_domain" in listing.content
    assert b"resolver exploded" in listing.content
    assert client.get("/admin/petstore/taskfailure/add/").status_code == 403
    detail = client.get(f"/admin/petstore/taskfailure/{row.pk}/change/")
    assert detail.status_code == 200 and b'name="_save"' not in detail.content
    client.post(f"/admin/petstore/taskfailure/{row.pk}/change/", {"count": "0"})
    assert client.post(f"/admin/petstore/taskfailure/{row.pk}/delete/").status_code == 403
    assert TaskFailure.objects.get().count == 1


@pytest.mark.django_db
def test_non_staff_cannot_see_them(client, bob):
    client.force_login(bob)
    response = client.get("/admin/petstore/taskfailure/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
