"""Paging cursors are signed with the platform's salt, and a cursor signed with any other
salt is refused."""

from __future__ import annotations

import pytest
from django.core import signing

from petstore.api import pagination
from tests.pets.helpers import assert_error


def signed(value: str, salt: str) -> str:
    return signing.Signer(salt=salt).sign(value)


def test_new_cursors_are_signed_with_the_platforms_salt(db):
    cursor = pagination.encode_cursor(42)
    assert signing.Signer(salt=pagination.CURSOR_SALT).unsign(cursor) == "42"
    assert not pagination.CURSOR_SALT.startswith("pets.")


def test_a_cursor_signed_with_the_platforms_salt_pages(api, make_pet):
    ids = [make_pet(f"Pet {i}").id for i in range(3)]
    cursor = signed(str(ids[0]), pagination.CURSOR_SALT)
    response = api.get("/v1/pets", {"limit": 1, "cursor": cursor})
    assert response.status_code == 200
    assert [pet["id"] for pet in response.json()] == [ids[1]]


@pytest.mark.parametrize("salt", ["pets.list.cursor", "django.contrib.sessions"])
def test_a_cursor_signed_with_another_salt_is_refused(api, make_pet, salt):
    pet = make_pet()
    cursor = signed(str(pet.id), salt)
    assert_error(api.get("/v1/pets", {"cursor": cursor}), 400, "validation_error")
