"""`manage.py idmarks` and `manage.py afterrestore` on their own: the marks are taken only with
no other session connected and only go up; without marks the margin is the operator's to give;
the sequences move past the marks, the restored values and the largest ids. The whole restore:
test_restore_runbook.py."""

from __future__ import annotations

import json
import stat

import psycopg
import pytest
import redis
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from pets.models import Category
from pets.services import pet_create
from petstore.backups import afterrestore
from tests.processes import OwnRedis, database_url


@pytest.fixture
def broker(tmp_path):
    """A broker of this test's own: the run's is shared by every test of the run."""
    own = OwnRedis(tmp_path).start()
    yield own
    own.kill()


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_the_marks_are_refused_while_another_session_is_connected(transactional_db, var_dir):
    with (
        psycopg.connect(database_url()),
        pytest.raises(CommandError, match=r"^1 other session\(s\) are connected.*petstore.target"),
    ):
        call_command("idmarks")
    assert not (var_dir / afterrestore.MARKS_FILE).exists()


def test_the_marks_only_go_up_and_are_their_owners_alone(transactional_db, var_dir):
    dogs = Category.objects.create(name="Dogs")
    pet = pet_create(name="Rex", category=dogs)
    sequence = next(s.name for s in afterrestore.sequences() if s.table and "pets_pet" in s.table)
    path = var_dir / afterrestore.MARKS_FILE
    path.write_text(json.dumps({"sequences": {sequence: pet.pk + 500}}))
    call_command("idmarks")
    marks = json.loads(path.read_text())["sequences"]
    assert marks[sequence] == pet.pk + 500  # an earlier, higher mark is kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_without_marks_the_gap_is_asked_for(db, var_dir):
    with pytest.raises(CommandError, match=r"^No id marks at .*give --gap N"):
        call_command("afterrestore")


def test_each_sequence_moves_past_its_mark_plus_the_gap_sessions_end_the_broker_empties(
    transactional_db, var_dir, client, django_user_model, settings, broker
):
    settings.CELERY_BROKER_URL = broker.url(1)
    redis.Redis.from_url(broker.url(1)).lpush("checks", "a message of the lost future")
    dogs = Category.objects.create(name="Dogs")
    pet = pet_create(name="Rex", category=dogs)
    client.force_login(django_user_model.objects.create_user("alice", password="x" * 20))
    sequence = next(s.name for s in afterrestore.sequences() if s.table and "pets_pet" in s.table)
    (var_dir / afterrestore.MARKS_FILE).write_text(
        json.dumps({"sequences": {sequence: pet.pk + 40}})
    )
    call_command("afterrestore", gap=10)
    assert pet_create(name="Fido", category=dogs).pk == pet.pk + 40 + 10 + 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM django_session")
        assert cursor.fetchone() == (0,)
    assert not (var_dir / afterrestore.MARKS_FILE).exists()
    assert redis.Redis.from_url(broker.url(1)).dbsize() == 0
