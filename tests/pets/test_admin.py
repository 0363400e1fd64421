"""The Django admin manages categories and pets."""

from __future__ import annotations

import pytest

from pets.models import Pet, PetStatus


@pytest.fixture
def admin_client(client, carol):
    client.force_login(carol)
    return client


def listed(admin_client, query: dict) -> set[str]:
    """The names of the pets the admin's changelist shows for `query` (its rows, not the
    page's text, which also holds random tokens that may spell a name)."""
    page = admin_client.get("/admin/pets/pet/", query)
    assert page.status_code == 200
    return {pet.name for pet in page.context["cl"].result_list}


def test_pets_list_filters_by_status_and_category_and_searches_by_name(
    admin_client, make_pet, cats
):
    make_pet("Rex", status=PetStatus.SOLD)
    make_pet("Tom", category=cats)
    assert listed(admin_client, {"status__exact": "sold"}) == {"Rex"}
    assert listed(admin_client, {"category__id__exact": cats.id}) == {"Tom"}
    assert listed(admin_client, {"q": "tom"}) == {"Tom"}
    assert listed(admin_client, {}) == {"Rex", "Tom"}


def test_a_pet_and_a_category_can_be_added_in_the_admin(admin_client, dogs):
    response = admin_client.post("/admin/pets/category/add/", {"name": "Birds"}, follow=True)
    assert response.status_code == 200
    response = admin_client.post(
        "/admin/pets/pet/add/",
        {"name": "Polly", "category": dogs.id, "status": "pending"},
        follow=True,
    )
    assert response.status_code == 200
    assert Pet.objects.get().name == "Polly"
