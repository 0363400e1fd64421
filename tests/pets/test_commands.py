"""Management commands: createapikey and loaddemo."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from pets.models import ApiKey, Category
from petstore.api.keys import hash_key
from tests.pets.helpers import bearer


def run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


@pytest.mark.django_db
def test_createapikey_creates_the_user_and_prints_a_working_key_alone_on_the_last_line():
    lines = run("createapikey", "alice")
    key = lines[-1]
    assert key.startswith("pst_") and " " not in key
    user = get_user_model().objects.get(username="alice")
    assert not user.has_usable_password()
    assert any("Created user" in line for line in lines[:-1])
    assert all(key not in line for line in lines[:-1])  # printed once
    row = ApiKey.objects.get()
    assert (row.user, row.name, row.key_hash) == (user, "default", hash_key(key))

    client = APIClient()
    client.credentials(**bearer(key))
    assert client.get("/v1/pets").status_code == 200


@pytest.mark.django_db
def test_createapikey_reuses_an_existing_user_and_takes_a_label():
    existing = get_user_model().objects.create_user("bob", password="pw-not-touched")
    first = run("createapikey", "bob")[-1]
    lines = run("createapikey", "bob", "--name", "ci")
    assert not any("Created user" in line for line in lines)
    assert lines[-1] != first
    assert sorted(ApiKey.objects.filter(user=existing).values_list("name", flat=True)) == [
        "ci",
        "default",
    ]
    existing.refresh_from_db()
    assert existing.check_password("pw-not-touched")


@pytest.mark.django_db
def test_createapikey_refuses_a_blank_username():
    with pytest.raises(CommandError):
        run("createapikey", " ")


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


def test_revokeapikey_revokes_by_the_prefix_the_admin_shows(api, alice_key):
    assert api.get("/v1/pets").status_code == 200  # the key is now cached
    lines = run("revokeapikey", alice_key.api_key.display_prefix)
    assert lines == [f"Revoked API key {alice_key.api_key.display_prefix} of alice."]
    assert api.get("/v1/pets").status_code == 401
    with pytest.raises(CommandError, match="already revoked"):
        run("revokeapikey", alice_key.api_key.prefix)


@pytest.mark.django_db
def test_revokeapikey_refuses_an_unknown_prefix():
    with pytest.raises(CommandError, match="No API key"):
        run("revokeapikey", "pst_00000000")
