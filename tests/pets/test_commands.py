"""Management commands: loaddemo."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from pets.models import Category


def run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


@pytest.mark.django_db
def test_loaddemo_loads_categories_with_fixed_ids_and_tells_how_to_get_a_key():
    lines = run("loaddemo")
    assert list(Category.objects.values_list("id", "name")) == [
        (1, "Dogs"),
        (2, "Cats"),
        (3, "Birds"),
        (4, "Fish"),
        (5, "Reptiles"),
    ]
    assert any("createapikey" in line for line in lines)


@pytest.mark.django_db
def test_loaddemos_curl_line_names_the_api_where_it_is(settings):
    """Production's public base (the OpenAPI document's first server), not a local port;
    under `make run` the same setting names its port (tests/makefile/test_make_run.py)."""
    settings.API_BASE_URL = "https://app.example/v1"
    curl = run("loaddemo")[-1]
    assert curl == "then: curl -H 'Authorization: Bearer <key>' https://app.example/v1/pets"


@pytest.mark.django_db
def test_loaddemo_is_idempotent_and_leaves_edits_alone():
    run("loaddemo")
    Category.objects.filter(pk=1).update(name="Good dogs")
    lines = run("loaddemo")
    assert Category.objects.count() == 5
    assert Category.objects.get(pk=1).name == "Good dogs"
    assert "Category 2 Cats: exists" in lines


@pytest.mark.django_db
def test_after_loaddemo_new_categories_get_fresh_ids():
    # On PostgreSQL this needs the sequence moved past the explicit ids.
    run("loaddemo")
    assert Category.objects.create(name="Rabbits").id == 6


@pytest.mark.django_db
def test_loaddemo_does_not_duplicate_a_name_that_exists_under_another_id():
    Category.objects.create(pk=40, name="Cats")
    run("loaddemo")
    assert Category.objects.filter(name="Cats").count() == 1
    assert not Category.objects.filter(pk=2).exists()
