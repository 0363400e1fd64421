"""Paging cursors are signed with the platform's salt; a cursor signed under the salt that
named pets (before the domains API paged with it too) still pages, on either path of listPets."""

from __future__ import annotations

import pytest
from django.core import signing

from petstore.api import pagination
from tests.pets.helpers import assert_error


def signed(value: str, salt: str) -> str:
    return signing.Signer(salt=salt).sign(value)


def test_new_cursors_are_signed_with_the_platforms_salt_only(db):
    cursor = pagination.encode_cursor(42)
    assert signing.Signer(salt=pagination.CURSOR_SALT).unsign(cursor) == "42"
    assert not pagination.CURSOR_SALT.startswith("pets.")
    for former in pagination.FORMER_CURSOR_SALTS:
        with pytest.raises(signing.BadSignature):
            signing.Signer(salt=former).unsign(cursor)


@pytest.mark.parametrize("fast_path", [True, False], ids=["hot-path", "drf"])
def test_a_cursor_signed_with_the_former_pets_salt_still_pages(api, make_pet, settings, fast_path):
    settings.API_LIST_FAST_PATH = fast_path
    ids = [make_pet(f"Pet {i}").id for i in range(3)]
    cursor = signed(str(ids[0]), "pets.list.cursor")
    response = api.get("/v1/pets", {"limit": 1, "cursor": cursor})
    assert response.status_code == 200
    assert [pet["id"] for pet in response.json()] == [ids[1]]
    # The next link it gives is signed with the platform's salt.
    following = response["Link"].removeprefix("<").partition(">")[0]
    assert api.get(following).json()[0]["id"] == ids[2]
    assert pagination.encode_cursor(ids[1]) in following


def test_a_cursor_signed_with_another_salt_is_refused(api, make_pet):
    pet = make_pet()
    cursor = signed(str(pet.id), "django.contrib.sessions")
    assert_error(api.get("/v1/pets", {"cursor": cursor}), 400, "validation_error")
