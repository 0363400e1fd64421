"""The Django admin manages categories and pets."""

from __future__ import annotations

import pytest

from pets.models import Pet, PetStatus


@pytest.fixture
def admin_client(client, carol):
    client.force_login(carol)
    return client


def test_pets_list_filters_by_status_and_category_and_searches_by_name(
    admin_client, make_pet, cats
):
    make_pet("Rex", status=PetStatus.SOLD)
    make_pet("Tom", category=cats)
    page = admin_client.get("/admin/pets/pet/", {"status__exact": "sold"})
    assert page.status_code == 200
    assert "Rex" in page.text and "Tom" not in page.text
    page = admin_client.get("/admin/pets/pet/", {"category__id__exact": cats.id})
    assert "Tom" in page.text and "Rex" not in page.text
    page = admin_client.get("/admin/pets/pet/", {"q": "tom"})
    assert "Tom" in page.text and "Rex" not in page.text


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
