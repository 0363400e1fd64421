"""The database refuses every change to an audit entry, and every deletion but the
retention purge's: through the ORM and through raw SQL, TRUNCATE too."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from domains.choices import AuditAction
from domains.models import AuditEntry, Project
from domains.services.audit import audit_purge, audit_record
from domains.tasks import purge_audit_log


def entry_at(project, days_ago: float) -> AuditEntry:
    entry = audit_record(project, AuditAction.DOMAIN_ADDED, "www.shop.test")
    # The only way to age a row is to write it aged: an UPDATE would be refused.
    entry.pk = None
    entry.at = timezone.now() - timedelta(days=days_ago)
    entry.save()
    return entry


@pytest.fixture
def entry(shop):
    return audit_record(shop, AuditAction.DOMAIN_ADDED, "www.shop.test", changes={"a": (1, 2)})


def refused(call) -> None:
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        call()


def test_an_orm_update_is_refused(entry):
    refused(lambda: AuditEntry.objects.filter(pk=entry.pk).update(action="domain.removed"))
    entry.target = "elsewhere"
    refused(entry.save)
    entry.refresh_from_db()
    assert (entry.action, entry.target) == ("domain.added", "www.shop.test")


def test_an_orm_delete_is_refused(entry):
    refused(lambda: AuditEntry.objects.filter(pk=entry.pk).delete())
    refused(entry.delete)
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE domains_auditentry SET changes = '{}' WHERE id = %s",
        "UPDATE domains_auditentry SET at = at - interval '1000 days' WHERE id = %s",
        "DELETE FROM domains_auditentry WHERE id = %s",
    ],
)
def test_raw_sql_is_refused(entry, sql):
    def run():
        with connection.cursor() as cursor:
            cursor.execute(sql, [entry.pk])

    refused(run)
    assert AuditEntry.objects.get(pk=entry.pk).changes == {"a": [1, 2]}


def test_truncate_is_refused(entry):
    def run():
        with connection.cursor() as cursor:
            # The tests' connections may truncate (tests/settings.py); an application's not.
            cursor.execute("SET LOCAL petstore.audit_truncate = 'off'")
            cursor.execute("TRUNCATE domains_auditentry")

    refused(run)
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def test_an_old_entry_cannot_be_deleted_outside_the_purge(shop, settings):
    old = entry_at(shop, settings.AUDIT_LOG_RETENTION_DAYS + 30)
    refused(lambda: AuditEntry.objects.filter(pk=old.pk).delete())


def test_the_purge_removes_only_what_is_past_the_retention(shop, bobs, settings):
    settings.AUDIT_LOG_RETENTION_DAYS = 400
    kept = [entry_at(shop, 0), entry_at(shop, 399), entry_at(bobs, 399.9)]
    gone = [entry_at(shop, 401), entry_at(bobs, 800)]
    assert audit_purge() == 2
    left = set(AuditEntry.objects.values_list("pk", flat=True))
    assert {e.pk for e in kept} <= left
    assert not {e.pk for e in gone} & left


def test_the_purge_leaves_nothing_open_behind_it(shop):
    entry = entry_at(shop, 10)
    with transaction.atomic():
        assert audit_purge(retention_days=400) == 0
        # The purge's cutoff is cleared before it returns: the same transaction cannot use it.
        refused(lambda: AuditEntry.objects.filter(pk=entry.pk).delete())


def test_the_purge_keeps_a_day_at_least(shop):
    with pytest.raises(DatabaseError, match="1 day at least"), transaction.atomic():
        audit_purge(retention_days=0)


def test_the_daily_task_purges_with_the_setting(shop, settings):
    settings.AUDIT_LOG_RETENTION_DAYS = 30
    old, recent = entry_at(shop, 31), entry_at(shop, 29)
    purge_audit_log()
    assert list(
        AuditEntry.objects.filter(pk__in=[old.pk, recent.pk]).values_list("pk", flat=True)
    ) == [recent.pk]
    assert settings.CELERY_BEAT_SCHEDULE["domains-purge-audit-log"]["task"] == (
        "domains.tasks.purge_audit_log"
    )


def test_a_project_goes_and_its_entries_stay(shop):
    entry = audit_record(shop, AuditAction.DOMAIN_ADDED, "www.shop.test")
    Project.objects.filter(pk=shop.pk).delete()
    assert AuditEntry.objects.get(pk=entry.pk).project_id == shop.pk
