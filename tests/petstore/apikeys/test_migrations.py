"""ApiKey moved from the pets app to apikeys: a database migrated before the move keeps its
keys, and the groups and users that held API key permissions keep them."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from petstore.apikeys.models import ApiKey

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
