"""Personas and small factories for the pets API tests.

alice and bob each hold an API key; `api` is a client that sends alice's key.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from pets.models import Category, Pet, PetStatus
from pets.services import api_key_issue, pet_create
from tests.pets.helpers import bearer


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice")


@pytest.fixture
def bob(db):
    return get_user_model().objects.create_user("bob")


@pytest.fixture
def alice_key(alice):
    return api_key_issue(user=alice, name="laptop")


@pytest.fixture
def bob_key(bob):
    return api_key_issue(user=bob)


@pytest.fixture
def anon():
    return APIClient()


@pytest.fixture
def api(alice_key):
    client = APIClient()
    client.credentials(**bearer(alice_key.plaintext))
    return client


@pytest.fixture
def dogs(db):
    return Category.objects.create(name="Dogs")


@pytest.fixture
def cats(db):
    return Category.objects.create(name="Cats")


@pytest.fixture
def make_pet(dogs):
    def make(name: str = "Rex", *, status: str = PetStatus.AVAILABLE, category=None) -> Pet:
        return pet_create(name=name, category=category or dogs, status=status)

    return make
