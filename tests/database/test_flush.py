"""The tests' flush (tests/database/): DELETEs leave the tables as Django's TRUNCATE does."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management.color import no_style
from django.db import connection
from django.db.backends.postgresql.operations import DatabaseOperations

from domains.choices import AuditAction
from domains.services.audit import audit_record
from domains.services.custom_domains import domain_add
from domains.services.projects import deploy_record, project_create
from pets.models import Category, Pet
from tests.database.base import REPLICA

pytestmark = pytest.mark.django_db(transaction=True)


def rows_by_table() -> dict[str, int]:
    counts = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.django_table_names(only_existing=True):
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    return counts


def seed() -> None:
    """Rows in the tables whose triggers a flush must not fire: the audit log (append-only)
    and the domains (the edge's version)."""
    owner = User.objects.create_user("alice", "alice@example.com", "not-a-password")
    shop = project_create(slug="shop", owner=owner, plan="pro", name="Shop")
    deploy_record(project=shop, html="<h1>Shop</h1>")
    Pet.objects.create(name="Rex", category=Category.objects.create(name="Dogs"))
    domain = domain_add(project=shop, hostname="www.flush.test", actor=None, limited=False)
    audit_record(shop, AuditAction.DOMAIN_ADDED, domain.hostname)


def flushed(sql: list[str]) -> dict[str, int]:
    connection.ops.execute_sql_flush(sql)
    return rows_by_table()


def test_the_flush_by_delete_leaves_every_table_as_the_truncate_does():
    tables = connection.introspection.django_table_names(only_existing=True)
    seed()
    assert sum(rows_by_table().values()) > 0
    by_delete = connection.ops.sql_flush(no_style(), tables)
    assert by_delete[0] == REPLICA  # the tests' role is a superuser's here
    after_delete = flushed(by_delete)

    seed()
    after_truncate = flushed(DatabaseOperations.sql_flush(connection.ops, no_style(), tables))

    assert after_delete == after_truncate
    assert {table: rows for table, rows in after_delete.items() if rows} == {}
