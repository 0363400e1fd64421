"""The database connection is dropped under a running server (pg_terminate_backend,
as a PostgreSQL restart or a failover does): the next requests succeed, because
persistent connections are health-checked before a request uses them. The check
(petstore/database/) asks the server nothing while the connection's socket is quiet."""

from __future__ import annotations

import requests
from django.db import connection, connections

from pets.models import Category, Pet
from petstore.apikeys.services import api_key_issue
from petstore.database.base import DatabaseWrapper
from tests.processes import service_env, wait_for, web_server


def _terminate_other_backends() -> int:
    """Kill every other session on the test database (the server's), like a failover, and
    wait until each is gone: a request sent while a backend is still ending its session
    would be one in flight when its connection dropped, which no health check can save."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def _server_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_requests_after_a_dropped_connection_succeed(
    transactional_db, settings, tmp_path, django_user_model
):
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""
    user = django_user_model.objects.create_user("dora")
    auth = {"Authorization": f"Bearer {api_key_issue(user=user).plaintext}"}
    dogs = Category.objects.create(name="Dogs")
    env = service_env(settings, DB_CONN_MAX_AGE="600")  # persistent: kept between requests
    with web_server(env, tmp_path) as base:
        assert requests.get(base + "/v1/pets", headers=auth).status_code == 200
        # Enough creates that the server's connection holds createPet's statement prepared
        # (pets/api/createpath.py): the connection that drops takes it along.
        threshold = settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"]
        for n in range(threshold + 1):
            before = {"name": f"Before {n}", "categoryId": dogs.pk}
            assert requests.post(base + "/v1/pets", json=before, headers=auth).status_code == 201
        assert _server_sessions() >= 1  # the server keeps its connection open
        for round_ in range(2):
            assert _terminate_other_backends() >= 1
            listed = requests.get(base + "/v1/pets", headers=auth)
            assert listed.status_code == 200, listed.text
            created = requests.post(
                base + "/v1/pets",
                json={"name": f"After {round_}", "categoryId": dogs.pk},
                headers=auth,
            )
            assert created.status_code == 201, created.text
            assert requests.get(base + "/readyz").json()["checks"]["database"] == "ok"
    names = set(Pet.objects.values_list("name", flat=True))
    assert names == {"After 0", "After 1"} | {f"Before {n}" for n in range(threshold + 1)}


def test_the_settings_keep_health_checked_persistent_connections(settings):
    database = settings.DATABASES["default"]
    assert database["CONN_HEALTH_CHECKS"] is True
    assert database["CONN_MAX_AGE"] > 0
    assert isinstance(connections["default"], DatabaseWrapper)  # production's, or a subclass


def _last_query(pid: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0]


def test_the_health_check_asks_nothing_of_a_live_connection_and_finds_a_dropped_one(db):
    other = connections.create_connection("default")  # a server's connection, beside the test's
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT 'the last query'")
            pid = other.connection.info.backend_pid
        assert other.is_usable()
        assert _last_query(pid) == "SELECT 'the last query'"  # no SELECT 1 was sent

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        wait_for(lambda: not other.is_usable(), timeout=10, what="the dropped connection")
        other.close_if_unusable_or_obsolete()  # as a request starts: a check is due
        other.close_if_health_check_failed()  # as before its first query
        with other.cursor() as cursor:  # a new connection
            cursor.execute("SELECT pg_backend_pid()")
            assert cursor.fetchone()[0] != pid
    finally:
        other.close()
