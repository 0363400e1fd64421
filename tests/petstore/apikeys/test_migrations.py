"""The API key migrations on a real database: ApiKey taken over from the pets app keeps its
keys and permissions, the idempotency records' claim columns leave the model, then the
database, and a key made before scopes keeps every scope until an end the migration gives it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from petstore.api import idempotency
from petstore.apikeys.models import DEFAULT_KEY_DAYS, ApiKey, IdempotencyRecord
from petstore.apikeys.scopes import ALL_SCOPES

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(*targets: tuple[str, str | None]):
    """The project's state after migrating the test database to these targets."""
    executor = MigrationExecutor(connection)
    return executor.migrate(list(targets or executor.loader.graph.leaf_nodes())).apps


def test_a_key_and_its_permissions_survive_the_move_from_pets():
    old = migrate(("apikeys", None))  # as before the move: ApiKey in the pets app
    user = old.get_model("auth", "User").objects.create(username="keyops", is_staff=True)
    old.get_model("pets", "ApiKey").objects.create(
        user=user, name="laptop", prefix="0123abcd", key_hash="0" * 64
    )
    content_type, _ = old.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label="pets", model="apikey"
    )
    permission, _ = old.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename="change_apikey", defaults={"name": "Can change"}
    )
    group = old.get_model("auth", "Group").objects.create(name="key operators")
    group.permissions.add(permission)
    user.groups.add(group)

    migrate()

    key = ApiKey.objects.select_related("user").get(prefix="0123abcd")
    assert (key.name, key.user.username, key.key_hash) == ("laptop", "keyops", "0" * 64)
    ContentType.objects.clear_cache()
    assert ContentType.objects.get_for_model(ApiKey).pk == content_type.pk
    assert not ContentType.objects.filter(app_label="pets", model="apikey").exists()
    staff = get_user_model().objects.get(username="keyops")
    assert staff.has_perm("apikeys.change_apikey")


def claim_columns() -> set[str]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_table_description(cursor, "pets_idempotencyrecord")
    return {column.name for column in found} & {"claim_token", "locked_at"}


def test_the_claim_columns_leave_the_model_then_the_database():
    """0006 deletes the claims left without an answer, which no running process completes,
    and takes the claim columns out of the model; 0009 drops them, and going back makes them
    again with their default and NULL."""
    old = migrate(("apikeys", "0004_idempotencyrecord_claim_unused"))
    user = old.get_model("auth", "User").objects.create(username="claims")
    key = old.get_model("apikeys", "ApiKey").objects.create(
        user=user, prefix="claims01", key_hash="0" * 64
    )
    records = old.get_model("apikeys", "IdempotencyRecord").objects
    later = timezone.now() + idempotency.TTL
    records.create(
        api_key=key, key="unanswered", fingerprint="f", claim_token="t" * 32,
        locked_at=timezone.now(), expires_at=later,
    )  # fmt: skip
    records.create(
        api_key=key, key="answered", fingerprint="f", expires_at=later, response_status=201,
        response_body={"id": 1},
    )  # fmt: skip

    migrate()

    assert claim_columns() == set()
    api_key = ApiKey.objects.get(prefix="claims01")
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["answered"]
    with transaction.atomic():
        answer = idempotency.Answer(201, {"id": 2})
        assert idempotency.store(api_key=api_key, key="new", fingerprint="f", answer=answer)
    migrate(("apikeys", "0008_key_last_used_ip_and_expiry_told"))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT key, claim_token, locked_at FROM pets_idempotencyrecord ORDER BY key"
        )
        assert cursor.fetchall() == [("answered", "", None), ("new", "", None)]
    migrate()
    assert claim_columns() == set()


def test_a_key_made_before_scopes_gets_every_scope_and_ends_the_default_days_after():
    """apikeys.0007: a key of release 1.1.0 goes on working as it did (every scope) until
    DEFAULT_KEY_DAYS after the upgrade, when it ends like any key (its owners told a week
    before: tests/domains/services/test_keys.py)."""
    old = migrate(("apikeys", "0006_idempotencyrecord_claim_contract"))
    user = old.get_model("auth", "User").objects.create(username="before")
    old.get_model("apikeys", "ApiKey").objects.create(
        user=user, name="ci", prefix="before01", key_hash="1" * 64
    )
    started = timezone.now()

    migrate()

    key = ApiKey.objects.get(prefix="before01")
    assert set(key.scopes) == ALL_SCOPES
    days = timedelta(days=DEFAULT_KEY_DAYS)
    assert started + days <= key.expires_at <= timezone.now() + days
