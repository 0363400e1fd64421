"""Management commands: createapikey and revokeapikey."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from petstore.apikeys.keyformat import hash_key
from petstore.apikeys.models import ApiKey
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
