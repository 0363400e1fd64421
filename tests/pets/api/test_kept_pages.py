"""listPets' kept pages: each process keeps the pages it wrote while the list version (a
number the database raises in the same commit as any write to a pet) stays the same, and a
change is in the very next list from any process, whoever made it and however. The
processes are two web servers, as production runs them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from django.core.management import call_command
from django.db import connection, transaction

from pets import listversion
from pets.api import hotpath
from pets.models import Category, Pet, PetStatus
from petstore.apikeys.services import api_key_issue
from petstore.metrics.store import REGISTRY
from tests.pets.api.test_hotpath import play
from tests.petstore.database_copies import connected_to, older_copy
from tests.processes import service_env, web_server

# Committed writes: the version moves when the writing transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

# The kept pages' counters (pets/metrics.py), as their samples are named.
LOOKUPS = "petstore_list_kept_page_lookups_total"
MISSES = "petstore_list_kept_page_misses_total"
# Pages kept per process in these tests (API_LIST_PAGES_KEPT).
KEPT = 1024
# The row trigger on the pets.
TRIGGER = listversion.LIST.triggers()[0].name


@pytest.fixture(autouse=True)
def kept(settings) -> None:
    """Pages kept, as a deployment that turns them on keeps them (the default keeps none)."""
    settings.API_LIST_PAGES_KEPT = KEPT


@pytest.fixture
def dogs() -> Category:
    return Category.objects.create(name="Dogs")


def moves(write) -> int:
    """How far the version moved over `write()`."""
    before = listversion.current()
    write()
    return listversion.current() - before


def test_the_triggers_are_there():
    assert listversion.missing_triggers() == []


def test_a_disabled_trigger_keeps_no_pages(dogs, caplog):
    """Disabled, a trigger leaves the version still while pets change: as if it were gone."""
    Pet.objects.create(name="Rex", category=dogs)
    pages: Any = hotpath.kept_pages()
    pages.cache_clear()
    hotpath._version_kept.cache_clear()
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE pets_pet DISABLE TRIGGER {TRIGGER}")
    try:
        assert listversion.missing_triggers() == [TRIGGER]
        hotpath._kept_page(status=None, after=None, limit=10)
        hotpath._kept_page(status=None, after=None, limit=10)
        assert pages.cache_info().currsize == 0
        assert f"triggers missing: {TRIGGER}" in caplog.text
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE pets_pet ENABLE TRIGGER {TRIGGER}")
        hotpath._version_kept.cache_clear()
    assert listversion.missing_triggers() == []


def test_every_way_of_writing_a_pet_moves_the_version(dogs):
    rex = Pet.objects.create(name="Rex", category=dogs)
    assert moves(lambda: Pet.objects.create(name="Fido", category=dogs)) == 1
    assert moves(lambda: Pet.objects.filter(pk=rex.pk).update(status=PetStatus.SOLD)) >= 1
    assert moves(lambda: Pet.objects.bulk_create([Pet(name="P", category=dogs)] * 1)) == 1

    def raw_update() -> None:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE pets_pet SET name = 'Rexy' WHERE id = %s", [rex.pk])

    assert moves(raw_update) == 1
    assert moves(lambda: Pet.objects.filter(pk=rex.pk).delete()) == 1


def test_a_transaction_moves_it_once_and_only_when_it_commits(dogs):
    def many() -> None:
        with transaction.atomic():
            Pet.objects.bulk_create([Pet(name=f"P{i}", category=dogs) for i in range(50)])
            Pet.objects.update(status=PetStatus.PENDING)

    assert moves(many) == 1

    def rolled_back() -> None:
        with pytest.raises(RuntimeError), transaction.atomic():
            Pet.objects.create(name="Ghost", category=dogs)
            raise RuntimeError

    assert moves(rolled_back) == 0
    assert moves(lambda: Category.objects.create(name="Cats")) == 0  # not a pet


def test_a_flush_moves_it(dogs):
    Pet.objects.create(name="Rex", category=dogs)
    assert moves(lambda: call_command("flush", "--noinput", verbosity=0)) >= 1


def test_inside_a_transaction_the_page_is_read_every_time(dogs, settings):
    """A page read inside a transaction that wrote a pet would be kept under a version that
    has not moved yet (the triggers fire at commit); such reads skip the kept pages."""
    pages: Any = hotpath.kept_pages()  # functools.lru_cache's wrapper
    pages.cache_clear()
    with transaction.atomic():
        Pet.objects.create(name="Rex", category=dogs)
        hotpath._kept_page(status=None, after=None, limit=10)
    assert pages.cache_info().currsize == 0
    hotpath._kept_page(status=None, after=None, limit=10)
    assert pages.cache_info().currsize == 1


def count(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def test_every_lookup_of_the_kept_pages_and_every_miss_is_counted(dogs):
    """Their hit rate, over every process: 1 - misses / lookups."""
    Pet.objects.create(name="Rex", category=dogs)
    hotpath.kept_pages().cache_clear()  # type: ignore[attr-defined]
    before = count(LOOKUPS), count(MISSES)
    hotpath._kept_page(status=None, after=None, limit=10)  # a miss: read and kept
    hotpath._kept_page(status=None, after=None, limit=10)  # kept
    Pet.objects.create(name="Fido", category=dogs)
    hotpath._kept_page(status=None, after=None, limit=10)  # the version moved: a miss
    assert (count(LOOKUPS) - before[0], count(MISSES) - before[1]) == (3, 2)


def test_a_kept_page_is_answered_byte_for_byte_as_drf_answers_it(settings, alice_key, dogs):
    """Outside a transaction, as a server runs: the second round is answered from kept pages,
    with the same status, headers and bytes as DRF's generic list."""
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""
    for i in range(5):
        status = PetStatus.SOLD if i % 2 else PetStatus.AVAILABLE
        Pet.objects.create(name=f"P{i}", category=dogs, status=status)
    asked: list[tuple[str, dict]] = [
        ("/v1/pets?limit=2", {}),
        ("/v1/pets?status=sold&limit=1", {}),
        ("/v1/pets?limit=100", {}),
    ]
    pages: Any = hotpath.kept_pages()
    pages.cache_clear()
    first = play(settings, alice_key, asked, fast=True)
    kept = play(settings, alice_key, asked, fast=True)
    drf = play(settings, alice_key, asked, fast=False)
    assert pages.cache_info().hits == len(asked)  # the second round, from kept pages
    for request, a, b, c in zip(asked, first, kept, drf, strict=True):
        assert a[:3] == b[:3] == c[:3], request


@pytest.mark.parametrize("fast", [True, False], ids=["hot path", "DRF"])
def test_a_change_is_in_the_next_list_from_another_process(
    fast, settings, tmp_path, django_user_model, dogs
):
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""
    user = django_user_model.objects.create_user("dora")
    auth = {"Authorization": f"Bearer {api_key_issue(user=user).plaintext}"}
    rex = Pet.objects.create(name="Rex", category=dogs)
    env = service_env(
        settings,
        DB_CONN_MAX_AGE="600",
        API_LIST_FAST_PATH="1" if fast else "0",
        API_LIST_PAGES_KEPT=str(KEPT),
    )

    with web_server(env, tmp_path) as reader, web_server(env, tmp_path) as writer:

        def names() -> list[str]:
            response = requests.get(reader + "/v1/pets?limit=100", headers=auth, timeout=10)
            assert response.status_code == 200, response.text
            return [pet["name"] for pet in response.json()]

        assert names() == names() == ["Rex"]  # read, then (on the hot path) kept

        created = requests.post(
            writer + "/v1/pets", json={"name": "Fido", "categoryId": dogs.pk}, headers=auth
        )
        assert created.status_code == 201, created.text
        assert names() == ["Rex", "Fido"]  # the other process's create, at once

        Pet.objects.filter(pk=rex.pk).update(name="Rexy")  # this process, the ORM
        assert names() == ["Rexy", "Fido"]

        # A write the triggers do not see is not seen by a kept page either: the hot path
        # answers from its page until the version moves; DRF reads every time.
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE pets_pet DISABLE TRIGGER {TRIGGER}")
            try:
                cursor.execute("UPDATE pets_pet SET name = 'Hidden' WHERE id = %s", [rex.pk])
            finally:
                cursor.execute(f"ALTER TABLE pets_pet ENABLE TRIGGER {TRIGGER}")
        assert names() == (["Rexy", "Fido"] if fast else ["Hidden", "Fido"])

        Pet.objects.filter(name="Fido").delete()
        assert names() == ["Hidden"]


def test_a_database_restored_from_an_older_state_serves_no_page_kept_from_the_newer(dogs):
    """The process's database becomes an older copy of itself (a backup restored, a replica
    promoted that lacked the last commits), which a write then brings to the number of a
    page the process keeps, for other rows. The page is keyed by the database's incarnation
    too: it is not served."""
    rex = Pet.objects.create(name="Rex", category=dogs)

    def names() -> list[str]:
        body, _ = hotpath._kept_page(status=None, after=None, limit=10)
        return [pet["name"] for pet in json.loads(body)]

    with older_copy() as copy:  # Rex alone
        Pet.objects.create(name="Fido", category=dogs)
        held = listversion.current()
        pages: Any = hotpath.kept_pages()
        pages.cache_clear()
        assert names() == names() == ["Rex", "Fido"]
        assert pages.cache_info().hits == 1  # kept

        with connected_to(copy):
            while listversion.current() < held:
                Pet.objects.filter(pk=rex.pk).update(name="Max")
            assert listversion.current() == held  # the kept page's number, for other rows
            assert names() == ["Max"]
        assert names() == ["Rex", "Fido"]  # back on the first: its page, kept
